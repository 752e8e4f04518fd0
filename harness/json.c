/* SPDX-License-Identifier: MIT */
/*
 * A small JSON-lines writer: one object per line.  A record is built in
 * memory and written at kh_json_end() with one write(2) (looping only if the
 * kernel takes part of it), so records from this process are never
 * interleaved with other output and a record is only ever cut short when the
 * process dies inside that one write.  A reader of a guest console or of a
 * pipe sees every finished benchmark at once, and an interrupted run leaves
 * whole lines (plus at most one unterminated one).
 *
 * Strings are written as valid UTF-8 whatever their bytes: each byte that
 * does not begin a well-formed UTF-8 sequence (stray continuation bytes,
 * overlong forms, UTF-16 surrogates, code points above U+10FFFF, sequences
 * cut short) is replaced by U+FFFD, one per byte; every control character
 * (C0, DEL and C1) is escaped as \uXXXX (or \n, \t, \r, \b, \f).  A kernel
 * command line or DMI string in some legacy encoding thus costs a few
 * replacement characters, never the readability of the stream.
 *
 * The same calls render a readable indented "key: value" form when the
 * writer is started with kh_json_begin_text(): the fingerprint is written
 * once and shown both ways.  Strings there get the same treatment, without
 * the quotes.
 *
 * Errors are never swallowed: kh_json_end() returns -1 with errno set when
 * the record could not be built or written, and kh_json_error() keeps the
 * first such errno for the rest of the process.  A failed write(2) also
 * leaves the stream's own error indicator set (ferror()), so a caller that
 * checks its FILE at exit sees it too.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static int first_error;

int kh_json_error(void)
{
	return first_error;
}

/* ---------------------------------------------------------------- buffer */

static void fail(struct kh_json *j, int err)
{
	if (!j->err)
		j->err = err;
}

static void put(struct kh_json *j, const char *s, size_t n)
{
	if (j->err || !n)
		return;
	if (j->len + n > j->cap) {
		size_t cap = j->cap ? j->cap : 4096;
		char *b;

		while (cap < j->len + n)
			cap *= 2;
		b = realloc(j->buf, cap);
		if (!b) {
			fail(j, ENOMEM);
			return;
		}
		j->buf = b;
		j->cap = cap;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
}

static void puts_(struct kh_json *j, const char *s)
{
	put(j, s, strlen(s));
}

static void putc_(struct kh_json *j, char c)
{
	put(j, &c, 1);
}

__attribute__((format(printf, 2, 3)))
static void printf_(struct kh_json *j, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		fail(j, EOVERFLOW);	/* only numbers and indentation come here */
	else
		put(j, tmp, (size_t)n);
}

/* A programming error (unbalanced or too deep nesting): no record is better
 * than a wrong one. */
__attribute__((noreturn))
static void misuse(const char *what)
{
	fprintf(stderr, "kcross-harness: internal error in the JSON writer: %s\n", what);
	abort();
}

/* ----------------------------------------------------------------- UTF-8 */

/*
 * Length of the well-formed UTF-8 sequence at p (Unicode table 3-7), or 0
 * when the byte at p does not begin one.  The string is NUL-terminated, and
 * NUL is never a continuation byte, so no read passes its end.
 */
size_t kh_utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (p[0] < 0x80)
		return 1;
	if (p[0] < 0xc2)		/* continuation byte, or overlong C0/C1 */
		return 0;
	if (p[0] < 0xe0)
		n = 2;
	else if (p[0] < 0xf0) {
		n = 3;
		if (p[0] == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (p[0] == 0xed)
			hi = 0x9f;	/* UTF-16 surrogates D800-DFFF */
	} else if (p[0] < 0xf5) {
		n = 4;
		if (p[0] == 0xf0)
			lo = 0x90;	/* overlong */
		else if (p[0] == 0xf4)
			hi = 0x8f;	/* above U+10FFFF */
	} else {
		return 0;		/* F5-FF: above U+10FFFF or never valid */
	}
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/* s as valid UTF-8 with every control character escaped, unquoted. */
static void put_text(struct kh_json *j, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = kh_utf8_len(p);
		unsigned int cp = n == 2 ? (p[0] & 0x1fu) << 6 | (p[1] & 0x3fu) : p[0];

		if (n == 0) {
			puts_(j, "\xef\xbf\xbd");	/* U+FFFD */
			n = 1;
		} else if (n == 1 && (cp == '"' || cp == '\\') && !j->text) {
			putc_(j, '\\');
			putc_(j, (char)cp);
		} else if (n <= 2 && (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))) {
			switch (cp) {
			case '\n': puts_(j, "\\n"); break;
			case '\t': puts_(j, "\\t"); break;
			case '\r': puts_(j, "\\r"); break;
			case '\b': puts_(j, "\\b"); break;
			case '\f': puts_(j, "\\f"); break;
			default: printf_(j, "\\u%04x", cp);
			}
		} else {
			put(j, (const char *)p, n);
		}
		p += n;
	}
}

static void put_string(struct kh_json *j, const char *s)
{
	putc_(j, '"');
	put_text(j, s);
	putc_(j, '"');
}

/* ---------------------------------------------------------------- writer */

void kh_json_begin(struct kh_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	putc_(j, '{');
	j->depth = 1;
}

void kh_json_begin_text(struct kh_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->text = true;
	j->depth = 1;
}

/* Text mode: a key starts an indented line, array items follow on it. */
static void text_key(struct kh_json *j, const char *k)
{
	if (k) {
		printf_(j, "%*s", 2 * (j->depth - 1), "");
		put_text(j, k);
		puts_(j, ": ");
		j->need_comma[j->depth] = false;
	} else if (j->need_comma[j->depth]) {
		puts_(j, ", ");
	}
	j->need_comma[j->depth] = true;
}

static void key(struct kh_json *j, const char *k)
{
	if (j->text) {
		text_key(j, k);
		return;
	}
	if (j->need_comma[j->depth])
		putc_(j, ',');
	j->need_comma[j->depth] = true;
	if (k) {
		put_string(j, k);
		putc_(j, ':');
	}
}

static void open_(struct kh_json *j, const char *k, char c)
{
	if (j->depth < 1 || j->depth + 1 >= KH_JSON_MAX_DEPTH)
		misuse("nesting deeper than KH_JSON_MAX_DEPTH, or after kh_json_end");
	key(j, k);
	if (j->text) {
		if (c == '{') {
			if (j->len && j->buf[j->len - 1] == ' ')
				j->len--;	/* "key:" alone on its line */
			putc_(j, '\n');
		}
	} else {
		putc_(j, c);
	}
	j->depth++;
	j->need_comma[j->depth] = false;
	j->in_array[j->depth] = c == '[';
}

static void close_(struct kh_json *j, char c)
{
	if (j->depth < 2 || j->in_array[j->depth] != (c == ']'))
		misuse("closing an object or array that is not open");
	j->depth--;
	if (!j->text)
		putc_(j, c);
	else if (c == ']')
		putc_(j, '\n');
}

void kh_json_obj(struct kh_json *j, const char *k) { open_(j, k, '{'); }
void kh_json_arr(struct kh_json *j, const char *k) { open_(j, k, '['); }
void kh_json_obj_end(struct kh_json *j) { close_(j, '}'); }
void kh_json_arr_end(struct kh_json *j) { close_(j, ']'); }

/* Text mode: end a scalar's line unless it is an array item. */
static void text_eol(struct kh_json *j)
{
	if (j->text && !j->in_array[j->depth])
		putc_(j, '\n');
}

void kh_json_str(struct kh_json *j, const char *k, const char *v)
{
	key(j, k);
	if (!v)
		puts_(j, j->text ? "-" : "null");
	else if (j->text)
		put_text(j, v);
	else
		put_string(j, v);
	text_eol(j);
}

void kh_json_int(struct kh_json *j, const char *k, long long v)
{
	key(j, k);
	printf_(j, "%lld", v);
	text_eol(j);
}

void kh_json_uint(struct kh_json *j, const char *k, unsigned long long v)
{
	key(j, k);
	printf_(j, "%llu", v);
	text_eol(j);
}

#define KH_JSON_NUM_FORMAT "%.10g"

double kh_json_num_as_written(double v)
{
	char text[64];

	snprintf(text, sizeof(text), KH_JSON_NUM_FORMAT, v);
	return strtod(text, NULL);
}

void kh_json_num(struct kh_json *j, const char *k, double v)
{
	key(j, k);
	if (isfinite(v))
		printf_(j, KH_JSON_NUM_FORMAT, v);
	else
		puts_(j, j->text ? "-" : "null");
	text_eol(j);
}

void kh_json_bool(struct kh_json *j, const char *k, bool v)
{
	key(j, k);
	puts_(j, v ? (j->text ? "yes" : "true") : (j->text ? "no" : "false"));
	text_eol(j);
}

void kh_json_null(struct kh_json *j, const char *k)
{
	key(j, k);
	puts_(j, j->text ? "-" : "null");
	text_eol(j);
}

/*
 * The whole record in one write(2) on the stream's descriptor, after what
 * stdio already holds for it.  On a failure the rest goes through stdio,
 * which tries again and, failing too, sets the stream's error indicator.
 * A stream without a descriptor (a memory stream) is written with fwrite.
 */
static int write_record(FILE *f, const char *buf, size_t len)
{
	int fd = fileno(f), err = 0;
	size_t off = 0;

	if (fflush(f))
		return -1;
	while (fd >= 0 && off < len) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			break;
		}
		off += (size_t)n;
	}
	if (off < len && (fwrite(buf + off, 1, len - off, f) != len - off || fflush(f))) {
		if (err)
			errno = err;	/* the first write's reason */
		return -1;
	}
	return 0;
}

int kh_json_end(struct kh_json *j)
{
	int err;

	if (j->depth != 1)
		misuse("kh_json_end with an object or array still open");
	if (!j->text)
		puts_(j, "}\n");
	j->depth = 0;
	err = j->err;
	if (!err && write_record(j->f, j->buf, j->len))
		err = errno ? errno : EIO;
	free(j->buf);
	j->buf = NULL;
	j->len = j->cap = 0;
	if (!err)
		return 0;
	if (!first_error)
		first_error = err;
	errno = err;
	return -1;
}
