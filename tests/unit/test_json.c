/* SPDX-License-Identifier: MIT */
/*
 * The harness's JSON writer (harness/json.c): whatever bytes a string holds
 * (a kernel command line, a DMI string), the record is valid UTF-8 JSON;
 * NaN and infinities are null; nesting and commas are right; a record is
 * written whole at kh_json_end() and a write error is reported, not
 * swallowed.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "json.c"	/* the writer under test (not linked into tests) */
#include "tap.h"

#define FFFD "\xef\xbf\xbd"

/* The record the writer produces, in a static buffer (no trailing "\n"). */
static const char *record(void (*fill)(struct kh_json *, const void *), const void *arg,
			  bool text)
{
	static char out[1 << 20];
	FILE *f = tmpfile();
	struct kh_json j;
	size_t n;

	if (!f)
		tap_skip_all("tmpfile: %s", strerror(errno));
	if (text)
		kh_json_begin_text(&j, f);
	else
		kh_json_begin(&j, f);
	fill(&j, arg);
	if (kh_json_end(&j))
		tap_ok(0, "kh_json_end to a tmpfile failed: %s", strerror(errno));
	rewind(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	fclose(f);
	out[n] = 0;
	if (n && out[n - 1] == '\n')
		out[n - 1] = 0;
	return out;
}

static void fill_str(struct kh_json *j, const void *s)
{
	kh_json_str(j, "s", s);
}

/* {"s":"<want>"} for input s. */
static void check_str(const char *what, const char *s, const char *want)
{
	char expect[512];
	const char *got = record(fill_str, s, false);

	snprintf(expect, sizeof(expect), "{\"s\":\"%s\"}", want);
	if (!tap_ok(!strcmp(got, expect), "%s", what))
		tap_diag("got  %s\n# want %s", got, expect);
}

/* Every byte sequence of a record is well-formed UTF-8 with no raw control
 * character but the final newline. */
static bool clean_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = kh_utf8_len(p);

		if (!n || *p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] < 0xa0))
			return false;
		p += n;
	}
	return true;
}

static void test_utf8(void)
{
	/* Well-formed: kept as they are, boundaries of every range included. */
	check_str("ASCII", "abc xyz", "abc xyz");
	check_str("2-byte U+00E9 and U+00A0 kept", "caf\xc3\xa9\xc2\xa0", "caf\xc3\xa9\xc2\xa0");
	check_str("3-byte U+20AC, U+0800, U+D7FF, U+E000, U+FFFF kept",
		  "\xe2\x82\xac\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf",
		  "\xe2\x82\xac\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf");
	check_str("4-byte U+10000, U+1F600, U+10FFFF kept",
		  "\xf0\x90\x80\x80\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf",
		  "\xf0\x90\x80\x80\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf");

	/* Ill-formed: one U+FFFD per byte that begins no valid sequence. */
	check_str("Latin-1 bytes (a legacy DMI string)", "caf\xe9 na\xefve",
		  "caf" FFFD " na" FFFD "ve");
	check_str("stray continuation bytes", "a\x80\xbf" "b", "a" FFFD FFFD "b");
	check_str("overlong 2-byte (C0 AF, C1 BF)", "\xc0\xaf\xc1\xbf", FFFD FFFD FFFD FFFD);
	check_str("overlong 3-byte (E0 80 AF, E0 9F BF)", "\xe0\x80\xaf\xe0\x9f\xbf",
		  FFFD FFFD FFFD FFFD FFFD FFFD);
	check_str("overlong 4-byte (F0 8F BF BF)", "\xf0\x8f\xbf\xbf", FFFD FFFD FFFD FFFD);
	check_str("surrogates U+D800 and U+DFFF (ED A0 80, ED BF BF)", "\xed\xa0\x80\xed\xbf\xbf",
		  FFFD FFFD FFFD FFFD FFFD FFFD);
	check_str("above U+10FFFF (F4 90 80 80)", "\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD);
	check_str("F5..FF never valid", "\xf5\x80\x80\x80\xfe\xff",
		  FFFD FFFD FFFD FFFD FFFD FFFD);
	check_str("truncated 2-byte at end", "x\xc3", "x" FFFD);
	check_str("truncated 3-byte at end", "x\xe2\x82", "x" FFFD FFFD);
	check_str("truncated 4-byte at end", "x\xf0\x9f\x98", "x" FFFD FFFD FFFD);
	check_str("truncated sequence before ASCII", "\xe2\x82(\xc3)", FFFD FFFD "(" FFFD ")");
	check_str("valid after invalid resynchronises", "\xff\xc3\xa9", FFFD "\xc3\xa9");

	/* Control characters: all escaped, short forms where JSON has them. */
	check_str("short escapes", "\n\t\r\b\f", "\\n\\t\\r\\b\\f");
	check_str("other C0 and DEL", "\x01\x1b[0m\x1f\x7f", "\\u0001\\u001b[0m\\u001f\\u007f");
	check_str("C1 controls (U+0080, U+009B CSI, U+009F)", "\xc2\x80\xc2\x9b\xc2\x9f",
		  "\\u0080\\u009b\\u009f");
	check_str("quote and backslash", "a\"b\\c", "a\\\"b\\\\c");
	check_str("empty string", "", "");
	tap_ok(!strcmp(record(fill_str, NULL, false), "{\"s\":null}"), "NULL string is null");

	/* Any bytes at all: a clean record (a cheap exhaustive-ish sweep). */
	{
		char s[5] = { 0 };
		unsigned int bad = 0;
		uint32_t x = 12345;

		for (int i = 0; i < 20000; i++) {
			for (int k = 0; k < 4; k++) {
				x = x * 1103515245u + 12345u;
				s[k] = (char)(x >> 16 | 1);	/* never NUL */
			}
			if (!clean_utf8(record(fill_str, s, false)))
				bad++;
		}
		tap_ok(bad == 0, "20000 random 4-byte strings give clean UTF-8 records (%u not)", bad);
	}
}

static void fill_key(struct kh_json *j, const void *arg)
{
	kh_json_int(j, arg, 1);
}

static void fill_nums(struct kh_json *j, const void *arg)
{
	kh_json_num(j, "nan", NAN);
	kh_json_num(j, "inf", INFINITY);
	kh_json_num(j, "-inf", -INFINITY);
	kh_json_num(j, "x", 1.5);
	kh_json_num(j, "small", 1e-300);
	kh_json_int(j, "min", INT64_MIN);
	kh_json_uint(j, "max", UINT64_MAX);
	kh_json_bool(j, "t", true);
	kh_json_bool(j, "f", false);
	kh_json_null(j, "n");
}

static void fill_nested(struct kh_json *j, const void *arg)
{
	kh_json_obj(j, "a");
	kh_json_arr(j, "b");
	kh_json_int(j, NULL, 1);
	kh_json_arr(j, NULL);
	kh_json_num(j, NULL, NAN);
	kh_json_obj(j, NULL);
	kh_json_obj_end(j);
	kh_json_arr_end(j);
	kh_json_arr(j, NULL);
	kh_json_arr_end(j);
	kh_json_str(j, NULL, "x");
	kh_json_arr_end(j);
	kh_json_null(j, "c");
	kh_json_obj_end(j);
	kh_json_arr(j, "d");
	kh_json_arr_end(j);
}

static void fill_deep(struct kh_json *j, const void *arg)
{
	for (int i = 1; i < KH_JSON_MAX_DEPTH - 1; i++)
		kh_json_arr(j, i == 1 ? "deep" : NULL);
	kh_json_int(j, NULL, 7);
	for (int i = 1; i < KH_JSON_MAX_DEPTH - 1; i++)
		kh_json_arr_end(j);
}

static void fill_text(struct kh_json *j, const void *arg)
{
	kh_json_obj(j, "cpu");
	kh_json_str(j, "model", "X\xff\n");
	kh_json_arr(j, "flags");
	kh_json_str(j, NULL, "a");
	kh_json_str(j, NULL, "b");
	kh_json_arr_end(j);
	kh_json_null(j, "online");
	kh_json_obj_end(j);
	kh_json_num(j, "hz", NAN);
}

static void fill_big(struct kh_json *j, const void *arg)
{
	kh_json_arr(j, "samples");
	for (int i = 0; i < 50000; i++)
		kh_json_num(j, NULL, i + 0.25);
	kh_json_arr_end(j);
}

static void test_structure(void)
{
	const char *got;
	char deep[256] = "{\"deep\":";

	got = record(fill_key, "k\xe9y\n", false);
	tap_ok(!strcmp(got, "{\"k" FFFD "y\\n\":1}"), "keys get the same treatment: %s", got);
	got = record(fill_nums, NULL, false);
	tap_ok(!strcmp(got, "{\"nan\":null,\"inf\":null,\"-inf\":null,\"x\":1.5,\"small\":1e-300,"
			    "\"min\":-9223372036854775808,\"max\":18446744073709551615,"
			    "\"t\":true,\"f\":false,\"n\":null}"),
	       "NaN and infinities are null, integers exact: %s", got);
	got = record(fill_nested, NULL, false);
	tap_ok(!strcmp(got, "{\"a\":{\"b\":[1,[null,{}],[],\"x\"],\"c\":null},\"d\":[]}"),
	       "nesting and commas: %s", got);
	for (int i = 1; i < KH_JSON_MAX_DEPTH - 1; i++)
		strcat(deep, "[");
	strcat(deep, "7");
	for (int i = 1; i < KH_JSON_MAX_DEPTH - 1; i++)
		strcat(deep, "]");
	strcat(deep, "}");
	got = record(fill_deep, NULL, false);
	tap_ok(!strcmp(got, deep), "nesting to KH_JSON_MAX_DEPTH: %s", got);
	got = record(fill_text, NULL, true);
	tap_ok(!strcmp(got, "cpu:\n  model: X" FFFD "\\n\n  flags: a, b\n  online: -\nhz: -"),
	       "text rendering, same string treatment");
	if (strcmp(got, "cpu:\n  model: X" FFFD "\\n\n  flags: a, b\n  online: -\nhz: -"))
		tap_diag("got [%s]", got);
	got = record(fill_big, NULL, false);
	tap_ok(strlen(got) > 400000 && !strchr(got, '\n') && !strcmp(got + strlen(got) - 10, "49999.25]}"),
	       "a large record (%zu bytes) is one line", strlen(got));
}

/* The record reaches the stream only at kh_json_end, after what stdio held. */
static void test_one_write(void)
{
	FILE *f = tmpfile();
	struct kh_json j;
	char out[64] = "";
	long size_before;

	if (!f) {
		tap_skip("tmpfile: %s", strerror(errno));
		return;
	}
	fputs("head;", f);		/* buffered by stdio, not yet written */
	kh_json_begin(&j, f);
	kh_json_int(&j, "a", 1);
	size_before = lseek(fileno(f), 0, SEEK_END);
	tap_ok(kh_json_end(&j) == 0, "kh_json_end returns 0 on success");
	tap_ok(size_before == 0, "nothing reaches the file before kh_json_end (%ld bytes did)",
	       size_before);
	rewind(f);
	(void)!fread(out, 1, sizeof(out) - 1, f);
	tap_ok(!strcmp(out, "head;{\"a\":1}\n"), "stdio's pending bytes come first, in order");
	fclose(f);
}

/* A write error is reported by the return value, errno, ferror() and the
 * sticky kh_json_error(), never swallowed. */
static void test_write_error(void)
{
	FILE *f = fopen("/dev/full", "w");
	struct kh_json j;
	int rc, err;

	if (!f) {
		tap_skip("no /dev/full here: %s", strerror(errno));
		return;
	}
	tap_ok(kh_json_error() == 0, "no error before");
	kh_json_begin(&j, f);
	kh_json_str(&j, "a", "b");
	errno = 0;
	rc = kh_json_end(&j);
	err = errno;
	tap_ok(rc == -1 && err == ENOSPC, "kh_json_end to /dev/full: -1, errno ENOSPC (got %d, %s)",
	       rc, strerror(err));
	tap_ok(ferror(f), "the stream's error indicator is set for the caller");
	tap_ok(kh_json_error() == ENOSPC, "kh_json_error() keeps ENOSPC");
	kh_json_begin(&j, f);
	kh_json_end(&j);
	tap_ok(kh_json_error() == ENOSPC, "and stays set");
	fclose(f);
}

int main(void)
{
	test_utf8();
	test_structure();
	test_one_write();
	test_write_error();
	return tap_done();
}
