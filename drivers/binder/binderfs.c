// SPDX-License-Identifier: GPL-2.0
/*
 * binderfs for cask_binder: the kernel binder's binderfs UAPI
 * (<linux/android/binderfs.h>), per cell. See Documentation/binder.rst,
 * "binderfs".
 *
 * A mount belongs to its mounter's cell (made at mount time). Its
 * binder-control makes devices with BINDER_CTL_ADD; each device is a
 * context of the mount's cell, whoever opens it:
 *  - a device named as one of the module's devices (devices=: binder,
 *    hwbinder, vndbinder) IS the cell's context of that name, the one its
 *    tasks reach through /dev/NAME: a container that mounts binderfs and
 *    links /dev/binder to it shares one world with a process of the same
 *    cell that opens /dev/binder;
 *  - any other name (anbox-binder) is a context of its own in the cell
 *    (CBINDER_FS_INDEX, on bc->fs_contexts), which lives as long as its
 *    device inode or a process in it (ctx->refcount).
 *
 * Bounds: max= devices per mount (upstream's option), and the cell's
 * max_binderfs_devices across its mounts (a host-owned limit file, like
 * max_procs). Device numbers come from our own region of 2^20 minors, as
 * upstream's (a mount of a cell other than the host's cannot take the
 * last four, as upstream's mounts outside the initial IPC namespace).
 *
 * Lifetimes: a superblock holds its cell; a device inode holds its own
 * context, which holds the cell; a process holds its context (and, as
 * every binder file, its opener's cell). The filesystem type pins the
 * module while mounted (.owner), open files pin it through the binder
 * file operations (proc.c's, handed to cbinder_fs_init()). When the cell
 * is unlinked proc.c drains its binderfs contexts as its embedded ones
 * (cbinder_fs_unlink_cell()).
 *
 * Locking: bc->fs_lock (a mutex) protects bc->fs_contexts; it is taken
 * without ctx->lock, which nests inside it. info->lock protects a mount's
 * device count and max=.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/fsnotify.h>
#include <linux/idr.h>
#include <linux/kdev_t.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/kstrtox.h>
#include <linux/namei.h>
#include <linux/pid_namespace.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>
#include <uapi/linux/android/binderfs.h>
#include <uapi/linux/magic.h>
#include <cask/cell.h>

#include "binder.h"

static char *fstype = "";
module_param(fstype, charp, 0444);
MODULE_PARM_DESC(fstype,
		 "binderfs type name (default: binder, or cask_binder when another binder filesystem is registered)");

#define CBINDERFS_MAX_MINOR		BIT(MINORBITS)
/* Upstream keeps the last four minors for the initial IPC namespace. */
#define CBINDERFS_MAX_MINOR_CAPPED	(CBINDERFS_MAX_MINOR - 4)
#define CBINDERFS_ROOT_INO		1
#define CBINDERFS_CONTROL_INO		2
#define CBINDERFS_INO_OFFSET		3

static dev_t cbinderfs_devt;
static DEFINE_IDA(cbinderfs_minors);
/* The binder files' operations (proc.c's, above us), set at init. */
static const struct file_operations *cbinderfs_fops;

/*
 * What cask implements of upstream's features/ files: one line each, as
 * the code gains them.
 */
static const char *const cbinderfs_features[] = {
	"extended_error",
	"freeze_notification",
	"oneway_spam_detection",
};

/**
 * struct cbinderfs_opts - a mount's options being parsed
 * @max: max=, devices of the mount
 * @stats_global: stats=global, binder_logs/
 * @cell: the mounter's cell (reference), for a new mount
 */
struct cbinderfs_opts {
	unsigned int max;
	bool stats_global;
	struct cask_cell *cell;
};

/**
 * struct cbinderfs_info - one binderfs mount (superblock)
 * @cell: the mounter's cell (reference held)
 * @bc: its binder state
 * @root_uid: owner of the devices: root of the mount's user namespace
 * @root_gid: their group
 * @use_reserve: the host's mount may take the last four minors
 * @lock: protects @max and @count
 * @max: max= [lock]
 * @count: devices made by BINDER_CTL_ADD and not yet evicted [lock]
 * @stats_global: stats=global (fixed at mount)
 * @control: the binder-control dentry
 * @pid_ns: the mounter's pid namespace (reference held): binder_logs/
 *	shows pids as seen there, and only processes it sees
 */
struct cbinderfs_info {
	struct cask_cell *cell;
	struct cbinder_cell *bc;
	kuid_t root_uid;
	kgid_t root_gid;
	bool use_reserve;
	struct mutex lock;	/* see above */
	unsigned int max;
	unsigned int count;
	bool stats_global;
	struct dentry *control;
	struct pid_namespace *pid_ns;
};

static struct file_system_type cbinderfs_type;

static struct cbinderfs_info *cbinderfs_info(const struct super_block *sb)
{
	return sb->s_fs_info;
}

static void cbinder_context_get(struct cbinder_context *ctx)
{
	if (ctx->index == CBINDER_FS_INDEX)
		refcount_inc(&ctx->refcount);
	else
		cask_cell_get(ctx->bc->cell);
}

/**
 * cbinder_open_context() - the context an open of a device node joins
 * @inode: /dev/NAME (ours) or a binderfs device
 * @bc: the opener's cell's binder state
 *
 * /dev/NAME is the opener's cell's context of that name; a binderfs device
 * is its mount's cell's context, whoever opens it.
 *
 * Context: process context, in the open of @inode.
 * Return: the context, with a reference the caller drops with
 * cbinder_context_put().
 */
struct cbinder_context *cbinder_open_context(struct inode *inode,
					     struct cbinder_cell *bc)
{
	struct cbinder_context *ctx;

	/* The open holds the inode: its context is still there. */
	if (inode->i_sb->s_type == &cbinderfs_type)
		ctx = inode->i_private;
	else
		ctx = &bc->ctx[cbinder_device_index(inode)];
	cbinder_context_get(ctx);
	return ctx;
}

/* A context of its own for a binderfs device of @bc's cell. */
static struct cbinder_context *cbinder_fs_context_new(struct cbinder_cell *bc,
						      const char *name)
{
	struct cbinder_context *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return NULL;
	ctx->name = kstrdup(name, GFP_KERNEL_ACCOUNT);
	if (!ctx->name) {
		kfree(ctx);
		return NULL;
	}
	spin_lock_init(&ctx->lock);
	ctx->bc = bc;
	ctx->index = CBINDER_FS_INDEX;
	ctx->mgr_uid = INVALID_UID;
	INIT_LIST_HEAD(&ctx->procs);
	INIT_LIST_HEAD(&ctx->dead_nodes);
	refcount_set(&ctx->refcount, 1);
	cask_cell_get(bc->cell);
	mutex_lock(&bc->fs_lock);
	/* Made after the cell's unlink: dead from the start. */
	ctx->unlinked = bc->fs_unlinked;
	list_add_tail(&ctx->fs_entry, &bc->fs_contexts);
	mutex_unlock(&bc->fs_lock);
	return ctx;
}

static struct inode *cbinderfs_new_inode(struct super_block *sb,
					 unsigned long ino, umode_t mode)
{
	struct inode *inode = new_inode(sb);

	if (!inode)
		return NULL;
	inode->i_ino = ino ?: iunique(sb, CBINDERFS_MAX_MINOR +
					  CBINDERFS_INO_OFFSET);
	inode->i_mode = mode;
	simple_inode_init_ts(inode);
	return inode;
}

static int cbinderfs_minor_alloc(struct cbinderfs_info *info)
{
	return ida_alloc_max(&cbinderfs_minors,
			     info->use_reserve ? CBINDERFS_MAX_MINOR - 1 :
						 CBINDERFS_MAX_MINOR_CAPPED - 1,
			     GFP_KERNEL);
}

/* Count a device against max= and the cell's bound. */
static int cbinderfs_charge(struct cbinderfs_info *info)
{
	struct cbinder_cell *bc = info->bc;

	scoped_guard(mutex, &info->lock) {
		if (info->count >= info->max)
			return -ENOSPC;
		info->count++;
	}
	if (atomic_long_inc_return(&bc->fs_devices) >
	    READ_ONCE(bc->max_fs_devices)) {
		atomic_long_dec(&bc->fs_devices);
		scoped_guard(mutex, &info->lock)
			info->count--;
		return -ENOSPC;
	}
	return 0;
}

static void cbinderfs_uncharge(struct cbinderfs_info *info)
{
	atomic_long_dec(&info->bc->fs_devices);
	scoped_guard(mutex, &info->lock)
		info->count--;
}

/*
 * BINDER_CTL_ADD: a device @req->name in the mount's root. As upstream,
 * the name is cut at BINDERFS_MAX_NAME, the numbers are copied out before
 * the name is looked up, and a name the VFS refuses ("", ".", "..", one
 * with a '/') fails as lookup_one_len() fails, with EACCES.
 */
static int cbinderfs_add(struct super_block *sb, struct binderfs_device *req,
			 struct binderfs_device __user *up)
{
	struct cbinderfs_info *info = cbinderfs_info(sb);
	struct cbinder_context *ctx = NULL;
	struct dentry *root = sb->s_root;
	struct inode *inode = NULL;
	struct dentry *dentry;
	int minor, index, ret;
	size_t len;

	req->name[BINDERFS_MAX_NAME] = '\0';
	len = strlen(req->name);
	ret = cbinderfs_charge(info);
	if (ret)
		return ret;
	minor = cbinderfs_minor_alloc(info);
	if (minor < 0) {
		ret = minor;
		goto uncharge;
	}
	ret = -ENOMEM;
	inode = cbinderfs_new_inode(sb, minor + CBINDERFS_INO_OFFSET, 0);
	if (!inode)
		goto free_minor;
	init_special_inode(inode, S_IFCHR | 0600,
			   MKDEV(MAJOR(cbinderfs_devt), minor));
	inode->i_fop = cbinderfs_fops;
	inode->i_uid = info->root_uid;
	inode->i_gid = info->root_gid;

	index = cbinder_device_lookup(req->name);
	if (index >= 0) {
		ctx = &info->bc->ctx[index];
	} else {
		ctx = cbinder_fs_context_new(info->bc, req->name);
		if (!ctx)
			goto put_inode;
	}

	req->major = MAJOR(cbinderfs_devt);
	req->minor = minor;
	if (up && copy_to_user(up, req, sizeof(*req))) {
		ret = -EFAULT;
		goto put_ctx;
	}

	inode_lock(d_inode(root));
	dentry = lookup_one_len(req->name, root, len);
	if (IS_ERR(dentry)) {
		ret = PTR_ERR(dentry);
		goto unlock;
	}
	if (d_really_is_positive(dentry)) {
		dput(dentry);
		ret = -EEXIST;
		goto unlock;
	}
	/* From here on eviction undoes the charge, the minor and the ctx. */
	inode->i_private = ctx;
	d_instantiate(dentry, inode);
	fsnotify_create(d_inode(root), dentry);
	/* The lookup's reference pins the dentry until unlink or umount. */
	inode_unlock(d_inode(root));
	return 0;

unlock:
	inode_unlock(d_inode(root));
put_ctx:
	if (ctx->index == CBINDER_FS_INDEX)
		cbinder_context_put(ctx);
put_inode:
	iput(inode);
free_minor:
	ida_free(&cbinderfs_minors, minor);
uncharge:
	cbinderfs_uncharge(info);
	return ret;
}

static long cbinderfs_ctl_ioctl(struct file *file, unsigned int cmd,
				unsigned long arg)
{
	struct binderfs_device __user *up = (void __user *)arg;
	struct binderfs_device req;

	if (cmd != BINDER_CTL_ADD)
		return -EINVAL;
	if (copy_from_user(&req, up, sizeof(req)))
		return -EFAULT;
	return cbinderfs_add(file_inode(file)->i_sb, &req, up);
}

static const struct file_operations cbinderfs_ctl_fops = {
	.owner = THIS_MODULE,
	.open = nonseekable_open,
	.unlocked_ioctl = cbinderfs_ctl_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static void cbinderfs_evict_inode(struct inode *inode)
{
	struct cbinderfs_info *info = cbinderfs_info(inode->i_sb);
	struct cbinder_context *ctx = inode->i_private;

	clear_inode(inode);
	if (!S_ISCHR(inode->i_mode))
		return;
	if (inode->i_ino == CBINDERFS_CONTROL_INO) {
		ida_free(&cbinderfs_minors, MINOR(inode->i_rdev));
		return;
	}
	/* Not instantiated: cbinderfs_add() undid it all itself. */
	if (!ctx)
		return;
	ida_free(&cbinderfs_minors, MINOR(inode->i_rdev));
	cbinderfs_uncharge(info);
	if (ctx->index == CBINDER_FS_INDEX)
		cbinder_context_put(ctx);
}

static int cbinderfs_show_options(struct seq_file *m, struct dentry *root)
{
	struct cbinderfs_info *info = cbinderfs_info(root->d_sb);

	/* As upstream: max= always shows, its default included. */
	scoped_guard(mutex, &info->lock)
		seq_printf(m, ",max=%u", info->max);
	if (info->stats_global)
		seq_puts(m, ",stats=global");
	return 0;
}

static const struct super_operations cbinderfs_super_ops = {
	.evict_inode = cbinderfs_evict_inode,
	.show_options = cbinderfs_show_options,
	.statfs = simple_statfs,
};

static bool cbinderfs_is_control(const struct dentry *dentry)
{
	return cbinderfs_info(dentry->d_sb)->control == dentry;
}

static int cbinderfs_rename(struct mnt_idmap *idmap, struct inode *old_dir,
			    struct dentry *old_dentry, struct inode *new_dir,
			    struct dentry *new_dentry, unsigned int flags)
{
	if (cbinderfs_is_control(old_dentry) ||
	    cbinderfs_is_control(new_dentry))
		return -EPERM;
	return simple_rename(idmap, old_dir, old_dentry, new_dir, new_dentry,
			     flags);
}

static int cbinderfs_unlink(struct inode *dir, struct dentry *dentry)
{
	if (cbinderfs_is_control(dentry))
		return -EPERM;
	return simple_unlink(dir, dentry);
}

static const struct inode_operations cbinderfs_root_iops = {
	.lookup = simple_lookup,
	.rename = cbinderfs_rename,
	.unlink = cbinderfs_unlink,
};

/* A new dentry @name in @parent, which the caller has locked. */
static struct dentry *cbinderfs_new_dentry(struct dentry *parent,
					   const char *name)
{
	struct dentry *dentry = lookup_one_len(name, parent, strlen(name));

	if (IS_ERR(dentry))
		return dentry;
	if (d_really_is_positive(dentry)) {
		dput(dentry);
		return ERR_PTR(-EEXIST);
	}
	return dentry;
}

/**
 * cbinderfs_create_file() - a read-only file of a binderfs mount
 * @parent: its directory
 * @name: its name
 * @fops: its operations
 * @data: its inode's i_private
 *
 * Context: process context, @parent unlocked.
 * Return: its dentry (pinned until umount; the caller holds no reference
 * of its own), or an error pointer.
 */
static struct dentry *cbinderfs_create_file(struct dentry *parent,
					    const char *name,
					    const struct file_operations *fops,
					    void *data)
{
	struct inode *dir = d_inode(parent), *inode;
	struct dentry *dentry;

	inode_lock(dir);
	dentry = cbinderfs_new_dentry(parent, name);
	if (IS_ERR(dentry))
		goto unlock;
	inode = cbinderfs_new_inode(dir->i_sb, 0, S_IFREG | 0444);
	if (!inode) {
		dput(dentry);
		dentry = ERR_PTR(-ENOMEM);
		goto unlock;
	}
	inode->i_fop = fops;
	inode->i_private = data;
	d_instantiate(dentry, inode);
	fsnotify_create(dir, dentry);
unlock:
	inode_unlock(dir);
	return dentry;
}

static struct dentry *cbinderfs_create_dir(struct dentry *parent,
					   const char *name)
{
	struct inode *dir = d_inode(parent), *inode;
	struct dentry *dentry;

	inode_lock(dir);
	dentry = cbinderfs_new_dentry(parent, name);
	if (IS_ERR(dentry))
		goto unlock;
	inode = cbinderfs_new_inode(dir->i_sb, 0, S_IFDIR | 0755);
	if (!inode) {
		dput(dentry);
		dentry = ERR_PTR(-ENOMEM);
		goto unlock;
	}
	inode->i_fop = &simple_dir_operations;
	inode->i_op = &simple_dir_inode_operations;
	set_nlink(inode, 2);
	d_instantiate(dentry, inode);
	inc_nlink(dir);
	fsnotify_mkdir(dir, dentry);
unlock:
	inode_unlock(dir);
	return dentry;
}

static int cbinderfs_feature_show(struct seq_file *m, void *unused)
{
	/* A file exists only for what cask implements. */
	seq_puts(m, "1\n");
	return 0;
}

DEFINE_SHOW_ATTRIBUTE(cbinderfs_feature);

static int cbinderfs_make_features(struct super_block *sb)
{
	struct dentry *dir, *dentry;
	size_t i;

	dir = cbinderfs_create_dir(sb->s_root, "features");
	if (IS_ERR(dir))
		return PTR_ERR(dir);
	for (i = 0; i < ARRAY_SIZE(cbinderfs_features); i++) {
		dentry = cbinderfs_create_file(dir, cbinderfs_features[i],
					       &cbinderfs_feature_fops, NULL);
		if (IS_ERR(dentry))
			return PTR_ERR(dentry);
	}
	return 0;
}

/* binder_logs/: what the mount's cell's contexts hold. */

enum cbinderfs_log {
	CBINDERFS_LOG_STATE,
	CBINDERFS_LOG_STATS,
	CBINDERFS_LOG_TRANSACTIONS,
	CBINDERFS_LOG_TXN_LOG,
	CBINDERFS_LOG_FAILED_LOG,
};

/* Which file: its inode's i_private, passed on as @m->private. */
static int cbinderfs_log_show(struct seq_file *m, void *unused)
{
	struct cbinderfs_info *info = cbinderfs_info(file_inode(m->file)->i_sb);
	enum cbinderfs_log what = (uintptr_t)m->private;
	struct cbinder_printer p = {
		.m = m,
		.ns = info->pid_ns,
		.binderfs = true,
		.all = true,
	};

	switch (what) {
	case CBINDERFS_LOG_STATE:
		seq_puts(m, "binder state:\n");
		cbinder_print_state(&p, info->bc);
		break;
	case CBINDERFS_LOG_STATS:
		seq_puts(m, "binder stats:\n");
		cbinder_print_stats(m, info->bc);
		break;
	case CBINDERFS_LOG_TRANSACTIONS:
		seq_puts(m, "binder transactions:\n");
		p.all = false;
		cbinder_print_state(&p, info->bc);
		break;
	case CBINDERFS_LOG_TXN_LOG:
		cbinder_print_log(&p, &info->bc->txn_log);
		break;
	case CBINDERFS_LOG_FAILED_LOG:
		cbinder_print_log(&p, &info->bc->failed_log);
		break;
	}
	return 0;
}

/* proc/PID: the pid is the inode's i_private, passed on as @m->private. */
static int cbinderfs_proc_file_show(struct seq_file *m, void *unused)
{
	struct cbinderfs_info *info = cbinderfs_info(file_inode(m->file)->i_sb);
	struct cbinder_printer p = {
		.m = m,
		.ns = info->pid_ns,
		.binderfs = true,
		.all = true,
		.pid = (uintptr_t)m->private,
	};

	seq_puts(m, "binder proc state:\n");
	cbinder_print_state(&p, info->bc);
	return 0;
}

DEFINE_SHOW_ATTRIBUTE(cbinderfs_log);
DEFINE_SHOW_ATTRIBUTE(cbinderfs_proc_file);

struct cbinderfs_pid_walk {
	struct pid_namespace *ns;
	pid_t after;
	pid_t next;
};

static int cbinderfs_next_pid(struct cbinder_context *ctx, void *arg)
{
	struct cbinderfs_pid_walk *w = arg;
	struct cbinder_proc *proc;
	pid_t nr;

	spin_lock(&ctx->lock);
	list_for_each_entry(proc, &ctx->procs, entry) {
		nr = pid_nr_ns(proc->pid, w->ns);
		/* 0: not in the mount's pid namespace, no file (nor an end). */
		if (nr > 0 && nr > w->after && (!w->next || nr < w->next))
			w->next = nr;
	}
	spin_unlock(&ctx->lock);
	return 0;
}

/* The lowest pid above @after of a process in the cell's contexts, or 0. */
static pid_t cbinderfs_pid_after(struct cbinderfs_info *info, pid_t after)
{
	struct cbinderfs_pid_walk w = { .ns = info->pid_ns, .after = after };

	cbinder_cell_walk_contexts(info->bc, cbinderfs_next_pid, &w);
	return w.next;
}

/*
 * proc/: one file per process in the cell's contexts, found when listed
 * or looked up, never kept (a process may go at any time): the entries
 * are dropped with their last use. Positions are pid + 2.
 */
static int cbinderfs_proc_iterate(struct file *file, struct dir_context *dctx)
{
	struct cbinderfs_info *info = cbinderfs_info(file_inode(file)->i_sb);
	char name[16];
	pid_t nr;
	int len;

	if (!dir_emit_dots(file, dctx))
		return 0;
	/* At pos, the pids above pos - 3 are left (pos 2: all). */
	while ((nr = cbinderfs_pid_after(info, (pid_t)(dctx->pos - 3)))) {
		len = snprintf(name, sizeof(name), "%d", nr);
		dctx->pos = (loff_t)nr + 2;
		/* Its inode is made by lookup: a number of ours, not 0. */
		if (!dir_emit(dctx, name, len, CBINDERFS_MAX_MINOR +
			      CBINDERFS_INO_OFFSET + nr, DT_REG))
			return 0;
		dctx->pos++;
	}
	return 0;
}

static struct dentry *cbinderfs_proc_lookup(struct inode *dir,
					    struct dentry *dentry,
					    unsigned int flags)
{
	struct cbinderfs_info *info = cbinderfs_info(dir->i_sb);
	struct inode *inode;
	int nr;

	if (kstrtoint(dentry->d_name.name, 10, &nr) || nr <= 0 ||
	    cbinderfs_pid_after(info, nr - 1) != nr)
		return simple_lookup(dir, dentry, flags);
	inode = cbinderfs_new_inode(dir->i_sb, 0, S_IFREG | 0444);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	inode->i_fop = &cbinderfs_proc_file_fops;
	inode->i_private = (void *)(uintptr_t)nr;
	d_set_d_op(dentry, &simple_dentry_operations);
	d_add(dentry, inode);
	return NULL;
}

static const struct inode_operations cbinderfs_proc_iops = {
	.lookup = cbinderfs_proc_lookup,
};

static const struct file_operations cbinderfs_proc_fops = {
	.read = generic_read_dir,
	.iterate_shared = cbinderfs_proc_iterate,
	.llseek = generic_file_llseek,
};

static int cbinderfs_make_logs(struct super_block *sb)
{
	static const char *const names[] = {
		[CBINDERFS_LOG_STATE] = "state",
		[CBINDERFS_LOG_STATS] = "stats",
		[CBINDERFS_LOG_TRANSACTIONS] = "transactions",
		[CBINDERFS_LOG_TXN_LOG] = "transaction_log",
		[CBINDERFS_LOG_FAILED_LOG] = "failed_transaction_log",
	};
	struct dentry *dir, *dentry;
	size_t i;

	dir = cbinderfs_create_dir(sb->s_root, "binder_logs");
	if (IS_ERR(dir))
		return PTR_ERR(dir);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		dentry = cbinderfs_create_file(dir, names[i],
					       &cbinderfs_log_fops,
					       (void *)(uintptr_t)i);
		if (IS_ERR(dentry))
			return PTR_ERR(dentry);
	}
	dentry = cbinderfs_create_dir(dir, "proc");
	if (IS_ERR(dentry))
		return PTR_ERR(dentry);
	d_inode(dentry)->i_op = &cbinderfs_proc_iops;
	d_inode(dentry)->i_fop = &cbinderfs_proc_fops;
	return 0;
}

static int cbinderfs_make_control(struct super_block *sb)
{
	struct cbinderfs_info *info = cbinderfs_info(sb);
	struct dentry *dentry;
	struct inode *inode;
	int minor;

	inode = cbinderfs_new_inode(sb, CBINDERFS_CONTROL_INO, 0);
	if (!inode)
		return -ENOMEM;
	minor = cbinderfs_minor_alloc(info);
	if (minor < 0) {
		/* Not a character device yet: eviction frees no minor. */
		iput(inode);
		return minor;
	}
	init_special_inode(inode, S_IFCHR | 0600,
			   MKDEV(MAJOR(cbinderfs_devt), minor));
	inode->i_fop = &cbinderfs_ctl_fops;
	inode->i_uid = info->root_uid;
	inode->i_gid = info->root_gid;
	dentry = d_alloc_name(sb->s_root, "binder-control");
	if (!dentry) {
		iput(inode);
		return -ENOMEM;
	}
	info->control = dentry;
	d_add(dentry, inode);
	return 0;
}

static int cbinderfs_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct cbinderfs_opts *opts = fc->fs_private;
	struct cbinderfs_info *info;
	struct inode *root;

	/*
	 * As upstream: a user namespace's root may mount it, and device
	 * nodes work there, but no file can be made except by
	 * BINDER_CTL_ADD, whose devices are ours.
	 */
	sb->s_iflags &= ~SB_I_NODEV;
	sb->s_iflags |= SB_I_NOEXEC;
	sb->s_magic = BINDERFS_SUPER_MAGIC;
	sb->s_op = &cbinderfs_super_ops;
	sb->s_time_gran = 1;
	sb->s_blocksize = PAGE_SIZE;
	sb->s_blocksize_bits = PAGE_SHIFT;

	info = kzalloc(sizeof(*info), GFP_KERNEL_ACCOUNT);
	if (!info)
		return -ENOMEM;
	mutex_init(&info->lock);
	/* From here on kill_sb frees what is made, whatever fails. */
	sb->s_fs_info = info;
	info->cell = opts->cell;
	opts->cell = NULL;
	info->bc = cask_cell_data(info->cell, &cbinder_driver);
	if (!info->bc)
		return -ENODEV;
	info->use_reserve = cask_cell_is_host(info->cell);
	info->root_uid = make_kuid(sb->s_user_ns, 0);
	if (!uid_valid(info->root_uid))
		info->root_uid = GLOBAL_ROOT_UID;
	info->root_gid = make_kgid(sb->s_user_ns, 0);
	if (!gid_valid(info->root_gid))
		info->root_gid = GLOBAL_ROOT_GID;
	info->max = opts->max;
	info->stats_global = opts->stats_global;
	info->pid_ns = get_pid_ns(task_active_pid_ns(current));

	root = cbinderfs_new_inode(sb, CBINDERFS_ROOT_INO, S_IFDIR | 0755);
	if (!root)
		return -ENOMEM;
	root->i_fop = &simple_dir_operations;
	root->i_op = &cbinderfs_root_iops;
	set_nlink(root, 2);
	sb->s_root = d_make_root(root);
	if (!sb->s_root)
		return -ENOMEM;
	return cbinderfs_make_control(sb) ?: cbinderfs_make_features(sb) ?:
	       (info->stats_global ? cbinderfs_make_logs(sb) : 0);
}

enum { CBINDERFS_OPT_MAX, CBINDERFS_OPT_STATS };

static const struct constant_table cbinderfs_stats_modes[] = {
	{ "global", 1 },
	{}
};

static const struct fs_parameter_spec cbinderfs_params[] = {
	fsparam_u32("max", CBINDERFS_OPT_MAX),
	fsparam_enum("stats", CBINDERFS_OPT_STATS, cbinderfs_stats_modes),
	{}
};

static int cbinderfs_parse_param(struct fs_context *fc,
				 struct fs_parameter *param)
{
	struct cbinderfs_opts *opts = fc->fs_private;
	struct fs_parse_result result;
	int opt;

	opt = fs_parse(fc, cbinderfs_params, param, &result);
	if (opt < 0)
		return opt;
	switch (opt) {
	case CBINDERFS_OPT_MAX:
		if (result.uint_32 > CBINDERFS_MAX_MINOR)
			return invalfc(fc, "Bad value for '%s'", param->key);
		opts->max = result.uint_32;
		break;
	case CBINDERFS_OPT_STATS:
		/*
		 * As upstream: the initial user namespace's CAP_SYS_ADMIN. The
		 * logs show only the mount's cell, but a user namespace's root
		 * gets no more here than upstream gives it.
		 */
		if (!capable(CAP_SYS_ADMIN))
			return -EPERM;
		opts->stats_global = true;
		break;
	}
	return 0;
}

static int cbinderfs_get_tree(struct fs_context *fc)
{
	return get_tree_nodev(fc, cbinderfs_fill_super);
}

static int cbinderfs_reconfigure(struct fs_context *fc)
{
	struct cbinderfs_opts *opts = fc->fs_private;
	struct cbinderfs_info *info = cbinderfs_info(fc->root->d_sb);

	if (info->stats_global != opts->stats_global)
		return invalfc(fc, "Binderfs stats mode cannot be changed during a remount");
	scoped_guard(mutex, &info->lock)
		info->max = opts->max;
	return 0;
}

static void cbinderfs_free_fc(struct fs_context *fc)
{
	struct cbinderfs_opts *opts = fc->fs_private;

	if (opts && opts->cell)
		cask_cell_put(opts->cell);
	kfree(opts);
}

static const struct fs_context_operations cbinderfs_context_ops = {
	.free = cbinderfs_free_fc,
	.parse_param = cbinderfs_parse_param,
	.get_tree = cbinderfs_get_tree,
	.reconfigure = cbinderfs_reconfigure,
};

static int cbinderfs_init_fs_context(struct fs_context *fc)
{
	struct cbinderfs_opts *opts;
	struct cask_cell *cell;

	opts = kzalloc(sizeof(*opts), GFP_KERNEL);
	if (!opts)
		return -ENOMEM;
	opts->max = CBINDERFS_MAX_MINOR;
	fc->fs_private = opts;
	fc->ops = &cbinderfs_context_ops;
	if (fc->purpose != FS_CONTEXT_FOR_MOUNT)
		return 0;
	/* The mount is its mounter's cell's (made now, without our locks). */
	cell = cask_cell_get_or_create();
	if (IS_ERR(cell))
		return PTR_ERR(cell);
	opts->cell = cell;
	return 0;
}

static void cbinderfs_kill_sb(struct super_block *sb)
{
	struct cbinderfs_info *info = cbinderfs_info(sb);

	/* Eviction needs @info: the inodes go first. */
	kill_litter_super(sb);
	if (!info)
		return;
	if (info->cell)
		cask_cell_put(info->cell);
	if (info->pid_ns)
		put_pid_ns(info->pid_ns);
	mutex_destroy(&info->lock);
	kfree(info);
}

static struct file_system_type cbinderfs_type = {
	.owner = THIS_MODULE,
	.name = "binder",
	.init_fs_context = cbinderfs_init_fs_context,
	.parameters = cbinderfs_params,
	.kill_sb = cbinderfs_kill_sb,
	.fs_flags = FS_USERNS_MOUNT,
};

/**
 * cbinder_fs_init() - register binderfs
 * @fops: the file operations of every device made in it
 *
 * Under fstype= if given, else as "binder", or as "cask_binder" when
 * another filesystem has that name (the kernel's binder_linux). A name
 * taken shows as register_filesystem()'s -EBUSY: nothing is looked up by
 * name, so no module is loaded for it.
 *
 * Context: module init.
 * Return: 0 or a negative errno.
 */
int cbinder_fs_init(const struct file_operations *fops)
{
	int ret;

	/* No mount, hence no device, before the registration below. */
	cbinderfs_fops = fops;
	ret = alloc_chrdev_region(&cbinderfs_devt, 0, CBINDERFS_MAX_MINOR,
				  "cask_binderfs");
	if (ret)
		return ret;
	if (*fstype) {
		cbinderfs_type.name = fstype;
		ret = register_filesystem(&cbinderfs_type);
	} else {
		ret = register_filesystem(&cbinderfs_type);
		if (ret == -EBUSY) {
			pr_info("a binder filesystem exists: binderfs is cask_binder\n");
			cbinderfs_type.name = "cask_binder";
			ret = register_filesystem(&cbinderfs_type);
		}
	}
	if (ret) {
		pr_err("cannot register filesystem %s: %d\n",
		       cbinderfs_type.name, ret);
		unregister_chrdev_region(cbinderfs_devt, CBINDERFS_MAX_MINOR);
	}
	return ret;
}

/**
 * cbinder_fs_exit() - unregister binderfs
 *
 * Context: module exit: no mount is left (each pins the module).
 */
void cbinder_fs_exit(void)
{
	unregister_filesystem(&cbinderfs_type);
	unregister_chrdev_region(cbinderfs_devt, CBINDERFS_MAX_MINOR);
	ida_destroy(&cbinderfs_minors);
}
