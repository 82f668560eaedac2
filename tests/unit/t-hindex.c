/*
 * t-hindex.c: unit tests for hindex.h, the hash index under the tables:
 * find or place, growth past many doublings, and equal hashes told apart
 * by the comparison.
 */
#include "test-helpers.h"
#include "hindex.h"

struct table {
	uint64_t *keys;
	size_t nr, alloc;
	struct hindex index;
	uint64_t (*hash)(uint64_t key);
};

static bool key_eq(const void *table, size_t i, const void *key)
{
	const struct table *t = table;

	return t->keys[i] == *(const uint64_t *)key;
}

/* The entry of key, added when new (*added says which). */
static size_t table_get(struct table *t, uint64_t key, bool *added)
{
	uint64_t h = t->hash(key);
	size_t s, i;

	i = hindex_probe(&t->index, h, key_eq, t, &key, &s);
	*added = i == HINDEX_NONE;
	if (i != HINDEX_NONE)
		return i;
	ALLOC_GROW(t->keys, t->nr + 1, t->alloc);
	t->keys[t->nr] = key;
	hindex_set(&t->index, s, h, t->nr);
	return t->nr++;
}

static uint64_t mixed(uint64_t key)
{
	return hash_u64(HASH_SEED, key);
}

static uint64_t constant(uint64_t key)
{
	return 42;	/* every key collides: only the comparison tells them apart */
}

static void check_table(uint64_t (*hash)(uint64_t), size_t n)
{
	struct table t = { .hash = hash };
	bool added;

	assert_int_equal(hindex_lookup(&t.index, 1, key_eq, &t, &(uint64_t){ 1 }), HINDEX_NONE);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(table_get(&t, i * 7919, &added), i);
		assert_true(added);
	}
	assert_int_equal(t.index.nr, n);
	assert_true(t.index.nslots >= 2 * n);
	assert_int_equal(t.index.nslots & (t.index.nslots - 1), 0);
	for (size_t i = 0; i < n; i++) {
		uint64_t key = i * 7919;

		assert_int_equal(table_get(&t, key, &added), i);
		assert_false(added);
		assert_int_equal(hindex_lookup(&t.index, hash(key), key_eq, &t, &key), i);
	}
	assert_int_equal(hindex_lookup(&t.index, hash(3), key_eq, &t, &(uint64_t){ 3 }),
			 HINDEX_NONE);
	hindex_release(&t.index);
	assert_null(t.index.slots);
	assert_int_equal(t.index.nslots, 0);
	free(t.keys);
}

static void test_hindex__find_or_place_and_grow(void **state)
{
	check_table(mixed, 100000);
}

static void test_hindex__equal_hashes(void **state)
{
	check_table(constant, 300);
}

static void test_hindex__add_without_lookup(void **state)
{
	struct table t = { .hash = mixed };
	uint64_t key;

	for (size_t i = 0; i < 1000; i++) {
		ALLOC_GROW(t.keys, t.nr + 1, t.alloc);
		t.keys[t.nr] = i;
		hindex_add(&t.index, mixed(i), t.nr++);
	}
	for (key = 0; key < 1000; key++)
		assert_int_equal(hindex_lookup(&t.index, mixed(key), key_eq, &t, &key), key);
	hindex_release(&t.index);
	free(t.keys);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hindex__find_or_place_and_grow),
		cmocka_unit_test(test_hindex__equal_hashes),
		cmocka_unit_test(test_hindex__add_without_lookup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
