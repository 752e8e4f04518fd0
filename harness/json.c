/* SPDX-License-Identifier: MIT */
/*
 * A small streaming JSON writer: one object per line, written straight to a
 * FILE and flushed at the end of each record so that a reader sees every
 * finished benchmark at once, and an interrupted run leaves whole lines.
 *
 * The same calls render a readable indented "key: value" form when the
 * writer is started with kh_json_begin_text(): the fingerprint is written
 * once and shown both ways.
 */
#include <math.h>
#include <string.h>

#include "harness.h"

void kh_json_begin(struct kh_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	fputc('{', f);
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
		fprintf(j->f, "%*s%s: ", 2 * (j->depth - 1), "", k);
		j->need_comma[j->depth] = false;
	} else if (j->need_comma[j->depth]) {
		fputs(", ", j->f);
	}
	j->need_comma[j->depth] = true;
}

static bool text_in_array(const struct kh_json *j)
{
	return j->in_array[j->depth];
}

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void key(struct kh_json *j, const char *k)
{
	if (j->text) {
		text_key(j, k);
		return;
	}
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
	if (k) {
		put_string(j->f, k);
		fputc(':', j->f);
	}
}

static void open_(struct kh_json *j, const char *k, char c)
{
	key(j, k);
	if (j->text) {
		if (c == '{')
			fputc('\n', j->f);
	} else {
		fputc(c, j->f);
	}
	j->depth++;
	j->need_comma[j->depth] = false;
	j->in_array[j->depth] = c == '[';
}

static void close_(struct kh_json *j, char c)
{
	j->depth--;
	if (!j->text)
		fputc(c, j->f);
	else if (c == ']')
		fputc('\n', j->f);
}

void kh_json_obj(struct kh_json *j, const char *k) { open_(j, k, '{'); }
void kh_json_arr(struct kh_json *j, const char *k) { open_(j, k, '['); }
void kh_json_obj_end(struct kh_json *j) { close_(j, '}'); }
void kh_json_arr_end(struct kh_json *j) { close_(j, ']'); }

/* Text mode: end a scalar's line unless it is an array item. */
static void text_eol(struct kh_json *j)
{
	if (j->text && !text_in_array(j))
		fputc('\n', j->f);
}

void kh_json_str(struct kh_json *j, const char *k, const char *v)
{
	key(j, k);
	if (!v)
		fputs(j->text ? "-" : "null", j->f);
	else if (j->text)
		fputs(v, j->f);
	else
		put_string(j->f, v);
	text_eol(j);
}

void kh_json_int(struct kh_json *j, const char *k, long long v)
{
	key(j, k);
	fprintf(j->f, "%lld", v);
	text_eol(j);
}

void kh_json_uint(struct kh_json *j, const char *k, unsigned long long v)
{
	key(j, k);
	fprintf(j->f, "%llu", v);
	text_eol(j);
}

void kh_json_num(struct kh_json *j, const char *k, double v)
{
	key(j, k);
	if (isfinite(v))
		fprintf(j->f, "%.10g", v);
	else
		fputs(j->text ? "-" : "null", j->f);
	text_eol(j);
}

void kh_json_bool(struct kh_json *j, const char *k, bool v)
{
	key(j, k);
	fputs(v ? (j->text ? "yes" : "true") : (j->text ? "no" : "false"), j->f);
	text_eol(j);
}

void kh_json_null(struct kh_json *j, const char *k)
{
	key(j, k);
	fputs(j->text ? "-" : "null", j->f);
	text_eol(j);
}

void kh_json_end(struct kh_json *j)
{
	if (!j->text)
		fputs("}\n", j->f);
	fflush(j->f);
}
