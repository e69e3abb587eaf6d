/* SPDX-License-Identifier: MIT */
/*
 * The counter table (src/control/counters.c): every field of the counter
 * structs has exactly one entry, names are unique, and docs/counters.md
 * lists each counter as the table says (the row "test_counters
 * --markdown" prints).  And the writer: the same counters as text lines
 * and as JSON members.
 *
 *   test_counters DOC          the checks, against the document DOC
 *   test_counters --markdown   the document's rows, to paste
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "counters.h"
#include "srnic_engine_state.h"

static const char *const scope_name[SRNIC_SCOPE_MAX] = {
	[SRNIC_SCOPE_NODE] = "node", [SRNIC_SCOPE_PORT] = "port",
	[SRNIC_SCOPE_PROC] = "process", [SRNIC_SCOPE_PEER] = "peer",
	[SRNIC_SCOPE_SERVICE] = "service",
};

/* Counter i's row in docs/counters.md. */
static void row(unsigned i, char *buf, size_t size)
{
	const struct srnic_counter *c = &srnic_counters[i];

	snprintf(buf, size, "| `%s` | %s | %s |", c->name,
		 c->line ? c->line : scope_name[c->scope], c->meaning);
}

/* Every 8-byte word of a struct of size bytes has one counter of scope. */
static void test_covers(enum srnic_scope scope, size_t size)
{
	unsigned words[64] = {0}, i, w;

	for (i = 0; i < srnic_ncounters; i++) {
		const struct srnic_counter *c = &srnic_counters[i];

		if (c->scope != scope)
			continue;
		CHECK(c->size == 8 && c->offset % 8 == 0 && c->offset < size,
		      "%s: not a word of its struct\n", c->name);
		if (c->offset / 8 < 64)
			words[c->offset / 8]++;
	}
	for (w = 0; w < size / 8 && w < 64; w++)
		CHECK(words[w] == 1, "%s scope: word %u has %u counters\n",
		      scope_name[scope], w, words[w]);
}

static void test_names(void)
{
	unsigned i, j;

	for (i = 0; i < srnic_ncounters; i++) {
		const struct srnic_counter *c = &srnic_counters[i];

		CHECK(c->name && c->meaning && c->scope < SRNIC_SCOPE_MAX,
		      "entry %u incomplete\n", i);
		CHECK((c->scope == SRNIC_SCOPE_NODE) == (c->line != NULL),
		      "%s: node counters, and only they, name a line\n",
		      c->name);
		for (j = 0; j < i; j++)
			CHECK(strcmp(c->name, srnic_counters[j].name),
			      "%s twice\n", c->name);
	}
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0, n;
	char chunk[4096];

	if (!f)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		text = realloc(text, len + n + 1);
		memcpy(text + len, chunk, n);
		len += n;
		text[len] = '\0';
	}
	fclose(f);
	return text;
}

static void test_doc(const char *path)
{
	char *doc = slurp(path), want[512];
	unsigned i;

	if (!CHECK(doc != NULL, "cannot read %s\n", path))
		return;
	for (i = 0; i < srnic_ncounters; i++) {
		row(i, want, sizeof(want));
		CHECK(strstr(doc, want) != NULL,
		      "%s lacks the row\n  %s\n(test_counters --markdown "
		      "prints them all)\n", path, want);
	}
	free(doc);
}

/* What the writer makes of a process's counters, in format json. */
static char *write_stats(const struct srnic_stats *st, bool json)
{
	struct srnic_out o;
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	srnic_out_begin(&o, f, json);
	srnic_out_line(&o, "node", NULL);
	srnic_out_label_str(&o, "node", "a\"b", 8);
	srnic_out_counters(&o, SRNIC_SCOPE_NODE, st, 0);
	srnic_out_end(&o);
	fclose(f);
	return text;
}

static void test_writer(void)
{
	struct srnic_stats st = {0};
	char *text, *json;
	const char *drops_end;

	st.retransmits = 7;
	st.drops[SRNIC_DROP_NO_QP] = 3;
	text = write_stats(&st, false);
	json = write_stats(&st, true);
	CHECK(strstr(text, "\nrecovery retransmits 7 sack_resent_packets 0 "),
	      "text: %s\n", text);
	CHECK(strstr(text, "\ndrop no_qp 3\n"), "text: %s\n", text);
	CHECK(strstr(text, "uc_give_up_us 16000"),
	      "text: uc_give_up_us unset shows the default\n");
	CHECK(!strncmp(json, "{\"node\":\"a\\\"b\",\"retransmits\":7,", 31),
	      "json: %s\n", json);
	CHECK(strstr(json, ",\"drops\":{\"malformed\":0,\"not_ours\":0,"),
	      "json: %s\n", json);
	/* (the drops object closes after its last counter, whichever) */
	drops_end = strstr(json, ",\"drops\":{");
	drops_end = drops_end ? strchr(drops_end, '}') : NULL;
	CHECK(drops_end && (!strncmp(drops_end, "},\"booting_sent\":0,", 19) ||
			    !strncmp(drops_end, "}}", 2)),
	      "json: %s\n", json);
	CHECK(json[strlen(json) - 2] == '}', "json ends the object: %s\n",
	      json);
	free(text);
	free(json);
}

int main(int argc, char **argv)
{
	unsigned i;

	if (argc == 2 && !strcmp(argv[1], "--markdown")) {
		char buf[512];

		for (i = 0; i < srnic_ncounters; i++) {
			row(i, buf, sizeof(buf));
			puts(buf);
		}
		return 0;
	}
	test_covers(SRNIC_SCOPE_NODE, sizeof(struct srnic_stats));
	test_covers(SRNIC_SCOPE_PORT, sizeof(struct srnic_port_stats));
	test_names();
	test_writer();
	if (argc == 2)
		test_doc(argv[1]);
	else
		CHECK(false, "usage: test_counters DOC | --markdown\n");
	return check_summary("test_counters");
}
