/*
 * t-reply-cache.c: unit tests for lib/reply-cache.c: an answer is given
 * only in the generation it was built in, the cache stays within its
 * entries and bytes, and it says which answers were asked for lately.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "reply-cache.h"
#include "strbuf.h"
#include "util.h"

static const char json_type[] = "application/json";

static int get(struct reply_cache *c, const char *key, struct strbuf *body)
{
	struct reply_blob *b = reply_cache_get(c, key);

	strbuf_setlen(body, 0);
	if (!b)
		return 0;
	assert_int_equal(b->status, 200);
	assert_ptr_equal(b->type, json_type);
	strbuf_add(body, b->data, b->len);
	reply_blob_unref(b);
	return 1;
}

static void put_gen(struct reply_cache *c, uint64_t gen, const char *key, const char *body)
{
	struct reply_blob *b = reply_blob_new(200, json_type, xstrdup(body), strlen(body));

	reply_cache_put(c, gen, key, b);
	reply_blob_unref(b);
}

static void put(struct reply_cache *c, const char *key, const char *body)
{
	put_gen(c, reply_cache_gen(c), key, body);
}

static void test_reply_cache__given_until_bumped(void **state)
{
	struct reply_cache c;
	struct strbuf sb = STRBUF_INIT;
	uint64_t before;

	(void)state;
	reply_cache_init(&c, 0, 0);
	assert_int_equal(get(&c, "5:/a/b", &sb), 0);
	put(&c, "5:/a/b", "{\"n\":1}");
	assert_int_equal(get(&c, "5:/a/b", &sb), 1);
	assert_string_equal(sb.buf, "{\"n\":1}");
	assert_int_equal(get(&c, "5:/a/c", &sb), 0);

	/* built before a change, put after it: never given */
	before = reply_cache_gen(&c);
	reply_cache_bump(&c);
	assert_int_equal(get(&c, "5:/a/b", &sb), 0);
	put_gen(&c, before, "5:/a/b", "old");
	assert_int_equal(get(&c, "5:/a/b", &sb), 0);
	put(&c, "5:/a/b", "{\"n\":2}");
	assert_int_equal(get(&c, "5:/a/b", &sb), 1);
	assert_string_equal(sb.buf, "{\"n\":2}");
	assert_int_equal(c.nr, 1);
	assert_int_equal(c.bytes, 7);

	/* a blob given out outlives the cache's dropping it */
	{
		struct reply_blob *b = reply_cache_get(&c, "5:/a/b");

		assert_non_null(b);
		reply_cache_bump(&c);
		assert_int_equal(get(&c, "5:/a/b", &sb), 0);
		assert_int_equal(c.bytes, 0);
		assert_memory_equal(b->data, "{\"n\":2}", 7);
		reply_blob_unref(b);
	}
	put(&c, "5:/a/b", "{\"n\":2}");
	assert_int_equal(c.bytes, 7);
	strbuf_release(&sb);
	reply_cache_release(&c);
}

static void test_reply_cache__bounded(void **state)
{
	struct reply_cache c;
	struct strbuf sb = STRBUF_INIT;
	char big[300], key[32];

	(void)state;
	reply_cache_init(&c, 3, 1000);
	put(&c, "k1", "one");
	put(&c, "k2", "two");
	put(&c, "k3", "three");
	assert_int_equal(get(&c, "k1", &sb), 1);	/* k2 is now the least recently used */
	put(&c, "k4", "four");
	assert_int_equal(c.nr, 3);
	assert_int_equal(get(&c, "k2", &sb), 0);
	assert_int_equal(get(&c, "k1", &sb), 1);
	assert_int_equal(get(&c, "k4", &sb), 1);

	/* more than a quarter of the bytes: not kept */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	put(&c, "big", big);
	assert_int_equal(get(&c, "big", &sb), 0);

	/* the bytes bound: a few 240-byte answers push the old ones out */
	big[240] = 0;
	for (int i = 0; i < 4; i++) {
		snprintf(key, sizeof(key), "b%d", i);
		put(&c, key, big);
		assert_true(c.bytes <= 1000);
		assert_true(c.nr <= 3);
	}
	assert_int_equal(get(&c, "b3", &sb), 1);
	assert_int_equal(sb.len, 240);
	strbuf_release(&sb);
	reply_cache_release(&c);
}

static void test_reply_cache__recent(void **state)
{
	struct reply_cache c;
	struct strbuf sb = STRBUF_INIT;
	char **keys;
	size_t nr;

	(void)state;
	reply_cache_init(&c, 0, 0);
	put(&c, "a", "1");
	put(&c, "b", "2");
	put(&c, "c", "3");
	assert_int_equal(get(&c, "a", &sb), 1);
	reply_cache_bump(&c);
	/* a stale answer's key is still known: it is what to build again */
	assert_int_equal(get(&c, "b", &sb), 0);
	nr = reply_cache_recent(&c, 3600, 2, &keys);
	assert_int_equal(nr, 2);
	assert_string_equal(keys[0], "b");
	assert_string_equal(keys[1], "a");
	for (size_t i = 0; i < nr; i++)
		free(keys[i]);
	free(keys);
	assert_int_equal(c.bytes, 2);	/* b's body went when it was found stale */
	nr = reply_cache_recent(&c, -1, 10, &keys);
	assert_int_equal(nr, 0);
	free(keys);
	strbuf_release(&sb);
	reply_cache_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reply_cache__given_until_bumped),
		cmocka_unit_test(test_reply_cache__bounded),
		cmocka_unit_test(test_reply_cache__recent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
