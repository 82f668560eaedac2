/*
 * json.h: what lib/ adds to jansson for the documents it writes. jansson
 * refuses a string that is not UTF-8; names, paths and messages come from
 * outside, so they go through json_text(). The caller owns what it returns.
 */
#ifndef HOTLOOP_JSON_H
#define HOTLOOP_JSON_H

struct json_t;

/* A JSON string of s, a byte that is not UTF-8 as U+FFFD; null for NULL. */
struct json_t *json_text(const char *s);

#endif
