// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for cask_binder's object validation and priorities (suite
 * cask_binder_txn): where an object may sit in a buffer, which PTR object
 * a child may name as its parent, the order fix-ups must come in, how they
 * are sorted, and the nice a cell's thread may be given.
 *
 * Buffers live in an allocator area set up at a made-up user address with
 * no mm, as in the allocator suite; objects are written with the
 * allocator's copy helpers, exactly where a sender's data would land.
 */
#include <kunit/test.h>
#include <linux/sched/prio.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "binder.h"

#define TXN_BASE	(512UL * 1024 * 1024)
#define TXN_AREA	(4 * PAGE_SIZE)

static void txn_release_action(void *alloc)
{
	cbinder_alloc_release(alloc);
}

/* A buffer with @data bytes of data and room for @nobj offsets. */
static struct cbinder_buffer *txn_buffer(struct kunit *test,
					 struct cbinder_alloc **allocp,
					 size_t data, size_t nobj)
{
	struct cbinder_alloc *alloc;
	struct cbinder_buffer *buffer;

	alloc = kunit_kzalloc(test, sizeof(*alloc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, alloc);
	cbinder_alloc_init(alloc, NULL);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   txn_release_action,
							   alloc));
	KUNIT_ASSERT_EQ(test, 0, cbinder_alloc_setup(alloc, TXN_BASE,
						     TXN_AREA));
	buffer = cbinder_alloc_new_buf(alloc, data, nobj * sizeof(u64), 0,
				       false);
	KUNIT_ASSERT_FALSE(test, IS_ERR(buffer));
	*allocp = alloc;
	return buffer;
}

/* Put a PTR object at @offset as object number @index. */
static void txn_put_ptr(struct kunit *test, struct cbinder_alloc *alloc,
			struct cbinder_buffer *buffer, size_t index,
			u64 offset, u64 uptr, u64 length, bool has_parent,
			u64 parent, u64 parent_offset)
{
	struct binder_buffer_object bbo = {
		.hdr.type = BINDER_TYPE_PTR,
		.flags = has_parent ? BINDER_BUFFER_FLAG_HAS_PARENT : 0,
		.buffer = uptr,
		.length = length,
		.parent = parent,
		.parent_offset = parent_offset,
	};
	size_t off_start = ALIGN(buffer->data_size, sizeof(u64));

	KUNIT_ASSERT_EQ(test, 0, cbinder_alloc_copy_to_buffer(alloc, buffer,
							      offset, &bbo,
							      sizeof(bbo)));
	KUNIT_ASSERT_EQ(test, 0,
			cbinder_alloc_copy_to_buffer(alloc, buffer,
						     off_start +
						     index * sizeof(u64),
						     &offset, sizeof(offset)));
}

static void txn_test_object_placement(struct kunit *test)
{
	const size_t fbo = sizeof(struct flat_binder_object);

	/* Known types have their size; anything else is refused. */
	KUNIT_EXPECT_EQ(test, fbo,
			cbinder_object_check(64, 0, BINDER_TYPE_BINDER, 0));
	KUNIT_EXPECT_EQ(test, sizeof(struct binder_fd_object),
			cbinder_object_check(64, 8, BINDER_TYPE_FD, 0));
	KUNIT_EXPECT_EQ(test, sizeof(struct binder_buffer_object),
			cbinder_object_check(64, 0, BINDER_TYPE_PTR, 0));
	KUNIT_EXPECT_EQ(test, sizeof(struct binder_fd_array_object),
			cbinder_object_check(64, 0, BINDER_TYPE_FDA, 0));
	KUNIT_EXPECT_EQ(test, 0, cbinder_object_check(64, 0, 0x12345678, 0));
	KUNIT_EXPECT_EQ(test, 0, cbinder_object_check(64, 0, 0, 0));
	/* u32 alignment. */
	KUNIT_EXPECT_EQ(test, fbo,
			cbinder_object_check(64, 4, BINDER_TYPE_HANDLE, 0));
	KUNIT_EXPECT_EQ(test, 0,
			cbinder_object_check(64, 2, BINDER_TYPE_HANDLE, 0));
	KUNIT_EXPECT_EQ(test, 0,
			cbinder_object_check(64, 7, BINDER_TYPE_HANDLE, 0));
	/* Wholly inside the data: exactly at the end, one byte over. */
	KUNIT_EXPECT_EQ(test, fbo,
			cbinder_object_check(64, 64 - fbo, BINDER_TYPE_BINDER,
					     0));
	KUNIT_EXPECT_EQ(test, 0,
			cbinder_object_check(63, 64 - fbo, BINDER_TYPE_BINDER,
					     0));
	KUNIT_EXPECT_EQ(test, 0,
			cbinder_object_check(64, 64, BINDER_TYPE_BINDER, 0));
	KUNIT_EXPECT_EQ(test, 0, cbinder_object_check(16, 0,
						      BINDER_TYPE_BINDER, 0));
	/* Offsets near the top of u64 must not wrap into the data. */
	KUNIT_EXPECT_EQ(test, 0,
			cbinder_object_check(64, U64_MAX - 3,
					     BINDER_TYPE_BINDER, 0));
	KUNIT_EXPECT_EQ(test, 0,
			cbinder_object_check(SIZE_MAX, SIZE_MAX - 8,
					     BINDER_TYPE_BINDER, 0));
	/* In order, no overlap: the previous object ended at off_min. */
	KUNIT_EXPECT_EQ(test, fbo,
			cbinder_object_check(64, 24, BINDER_TYPE_BINDER, 24));
	KUNIT_EXPECT_EQ(test, 0,
			cbinder_object_check(64, 20, BINDER_TYPE_BINDER, 24));
	KUNIT_EXPECT_EQ(test, 0,
			cbinder_object_check(64, 0, BINDER_TYPE_BINDER, 24));
}

/*
 * A parent is named by object index among those already translated: the
 * count of objects, never bytes (the CVE-2020-0041 class), and it must be
 * a PTR object.
 */
static void txn_test_parent_index(struct kunit *test)
{
	const size_t bbo = sizeof(struct binder_buffer_object);
	struct binder_buffer_object parent;
	struct flat_binder_object fbo = { .hdr.type = BINDER_TYPE_BINDER };
	struct cbinder_buffer *buffer;
	struct cbinder_alloc *alloc;
	size_t off_start;
	u64 poff, off2 = 2 * bbo;

	buffer = txn_buffer(test, &alloc, 3 * bbo, 3);
	off_start = ALIGN(buffer->data_size, sizeof(u64));
	txn_put_ptr(test, alloc, buffer, 0, 0, TXN_BASE + 4096, 64, false,
		    0, 0);
	txn_put_ptr(test, alloc, buffer, 1, bbo, TXN_BASE + 8192, 16, true,
		    0, 8);
	KUNIT_ASSERT_EQ(test, 0,
			cbinder_alloc_copy_to_buffer(alloc, buffer, off2, &fbo,
						     sizeof(fbo)));
	KUNIT_ASSERT_EQ(test, 0,
			cbinder_alloc_copy_to_buffer(alloc, buffer,
						     off_start + 16, &off2,
						     sizeof(off2)));

	/* Object 0 is valid once one object has been translated. */
	KUNIT_EXPECT_TRUE(test, cbinder_validate_ptr(alloc, buffer, 0,
						     off_start, 1, &parent,
						     &poff));
	KUNIT_EXPECT_EQ(test, 0ULL, poff);
	KUNIT_EXPECT_EQ(test, 64ULL, parent.length);
	/* Not before, and not itself or later ones. */
	KUNIT_EXPECT_FALSE(test, cbinder_validate_ptr(alloc, buffer, 0,
						      off_start, 0, &parent,
						      &poff));
	KUNIT_EXPECT_FALSE(test, cbinder_validate_ptr(alloc, buffer, 1,
						      off_start, 1, &parent,
						      &poff));
	KUNIT_EXPECT_TRUE(test, cbinder_validate_ptr(alloc, buffer, 1,
						     off_start, 2, &parent,
						     &poff));
	KUNIT_EXPECT_EQ(test, (u64)bbo, poff);
	/* A byte count in place of the object count reaches too far. */
	KUNIT_EXPECT_FALSE(test, cbinder_validate_ptr(alloc, buffer, 8,
						      off_start, 2, &parent,
						      &poff));
	KUNIT_EXPECT_FALSE(test, cbinder_validate_ptr(alloc, buffer,
						      U64_MAX, off_start, 3,
						      &parent, &poff));
	/* Object 2 is no PTR. */
	KUNIT_EXPECT_FALSE(test, cbinder_validate_ptr(alloc, buffer, 2,
						      off_start, 3, &parent,
						      &poff));
}

/*
 * Fix-ups go into the last PTR object or one of its ancestors, at
 * increasing offsets, so that a later copy never overwrites an earlier
 * fix-up; and, as in the kernel's binder, never with "last object at 0".
 */
static void txn_test_fixup_order(struct kunit *test)
{
	const size_t bbo = sizeof(struct binder_buffer_object);
	struct cbinder_buffer *buffer;
	struct cbinder_alloc *alloc;
	size_t off_start;
	u64 a = 8, b = 8 + bbo, c = 8 + 2 * bbo;

	/* An 8-byte header, then A; B and C are children of A. */
	buffer = txn_buffer(test, &alloc, 8 + 3 * bbo, 3);
	off_start = ALIGN(buffer->data_size, sizeof(u64));
	txn_put_ptr(test, alloc, buffer, 0, a, TXN_BASE + 4096, 64, false,
		    0, 0);
	txn_put_ptr(test, alloc, buffer, 1, b, TXN_BASE + 8192, 16, true,
		    0, 16);
	txn_put_ptr(test, alloc, buffer, 2, c, TXN_BASE + 12288, 16, true,
		    0, 32);

	/* Into A right after A was copied: any offset. */
	KUNIT_EXPECT_TRUE(test, cbinder_validate_fixup(alloc, buffer,
						       off_start, a, 0, a, 0));
	/* Into A after B (a child of A at 16): only past B's pointer. */
	KUNIT_EXPECT_FALSE(test, cbinder_validate_fixup(alloc, buffer,
							off_start, a, 16, b,
							0));
	KUNIT_EXPECT_FALSE(test, cbinder_validate_fixup(alloc, buffer,
							off_start, a, 23, b,
							0));
	KUNIT_EXPECT_TRUE(test, cbinder_validate_fixup(alloc, buffer,
						       off_start, a, 24, b,
						       0));
	/* Into B after C: B is no ancestor of C. */
	KUNIT_EXPECT_FALSE(test, cbinder_validate_fixup(alloc, buffer,
							off_start, b, 0, c,
							0));
	/* Within the last object, never below the last fix-up's end. */
	KUNIT_EXPECT_FALSE(test, cbinder_validate_fixup(alloc, buffer,
							off_start, a, 8, a,
							12));
	KUNIT_EXPECT_TRUE(test, cbinder_validate_fixup(alloc, buffer,
						       off_start, a, 12, a,
						       12));
	/* Nothing copied yet. */
	KUNIT_EXPECT_FALSE(test, cbinder_validate_fixup(alloc, buffer,
							off_start, a, 0, 0,
							0));
}

static void txn_fixups_add(struct kunit *test, struct list_head *list,
			   const size_t *offsets, const size_t *lens, size_t n)
{
	struct cbinder_sg_fixup *f;
	size_t i;

	for (i = 0; i < n; i++) {
		f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, f);
		f->offset = offsets[i];
		f->len = lens[i];
		list_add_tail(&f->entry, list);
	}
}

/*
 * Fix-ups are appended as translation makes them and sorted once: the
 * order a parent's fix-up after its children's children gives (down
 * again), a layout that used to cost a walk of the list per fix-up.
 */
static void txn_test_fixup_sort(struct kunit *test)
{
	static const size_t offs[] = { 0, 64, 128, 8, 192, 16, 256, 24 };
	static const size_t lens[] = { 8, 8, 8, 8, 8, 8, 8, 8 };
	static const size_t overlap[] = { 64, 0, 68 };
	static const size_t same[] = { 8, 16, 8 };
	struct cbinder_sg_fixup *f;
	size_t last = 0, n = 0;
	LIST_HEAD(list);

	txn_fixups_add(test, &list, offs, lens, ARRAY_SIZE(offs));
	KUNIT_EXPECT_EQ(test, 0, cbinder_sort_sg_fixups(&list, false));
	list_for_each_entry(f, &list, entry) {
		KUNIT_EXPECT_GE(test, f->offset, last);
		last = f->offset;
		n++;
	}
	KUNIT_EXPECT_EQ(test, ARRAY_SIZE(offs), n);

	/* Two that overlap, wherever they were made, are refused. */
	INIT_LIST_HEAD(&list);
	txn_fixups_add(test, &list, overlap, lens, ARRAY_SIZE(overlap));
	KUNIT_EXPECT_EQ(test, -EINVAL, cbinder_sort_sg_fixups(&list, false));
	INIT_LIST_HEAD(&list);
	txn_fixups_add(test, &list, same, lens, ARRAY_SIZE(same));
	KUNIT_EXPECT_EQ(test, -EINVAL, cbinder_sort_sg_fixups(&list, false));
	/* An FD array's fix-up is longer than a pointer's. */
	INIT_LIST_HEAD(&list);
	txn_fixups_add(test, &list, (const size_t[]){ 0, 16 },
		       (const size_t[]){ 24, 8 }, 2);
	KUNIT_EXPECT_EQ(test, -EINVAL, cbinder_sort_sg_fixups(&list, true));
	INIT_LIST_HEAD(&list);
	txn_fixups_add(test, &list, (const size_t[]){ 0, 24 },
		       (const size_t[]){ 24, 8 }, 2);
	KUNIT_EXPECT_EQ(test, 0, cbinder_sort_sg_fixups(&list, true));
}

static void txn_test_nice_floor(struct kunit *test)
{
	/* Asking for more priority than the floor gets the floor. */
	KUNIT_EXPECT_EQ(test, 0L, cbinder_clamp_nice(-20, 0));
	KUNIT_EXPECT_EQ(test, 0L, cbinder_clamp_nice(-1, 0));
	KUNIT_EXPECT_EQ(test, -5L, cbinder_clamp_nice(-10, -5));
	/* Less priority is never raised. */
	KUNIT_EXPECT_EQ(test, 10L, cbinder_clamp_nice(10, 0));
	KUNIT_EXPECT_EQ(test, 19L, cbinder_clamp_nice(19, -20));
	/* The host's floor lets everything through. */
	KUNIT_EXPECT_EQ(test, (long)MIN_NICE,
			cbinder_clamp_nice(MIN_NICE, MIN_NICE));
	KUNIT_EXPECT_EQ(test, 0L, cbinder_clamp_nice(0, MIN_NICE));
}

static struct kunit_case txn_test_cases[] = {
	KUNIT_CASE(txn_test_object_placement),
	KUNIT_CASE(txn_test_parent_index),
	KUNIT_CASE(txn_test_fixup_order),
	KUNIT_CASE(txn_test_fixup_sort),
	KUNIT_CASE(txn_test_nice_floor),
	{}
};

static struct kunit_suite txn_test_suite = {
	.name = "cask_binder_txn",
	.test_cases = txn_test_cases,
};

kunit_test_suite(txn_test_suite);
