/* SPDX-License-Identifier: MIT */
/*
 * srnic_op_table is the one list of opcodes; two texts restate it for
 * people and for Wireshark.  This test holds them to it:
 *
 *  - the table itself: every opcode below SRNIC_OP_MAX has an entry whose
 *    header length is its extension's, and no byte beyond has one;
 *  - tools/wireshark/srnic.lua: its OPS lines name the same opcodes, with
 *    the same names, extensions and payload;
 *  - docs/wire-protocol.md: its "Opcodes" table likewise.
 *
 * Both files are read from the source tree (SRNIC_SOURCE_ROOT, set by
 * meson), so the test needs no arguments.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "srnic_wire.h"

#define NAME_MAX_LEN 32
#define EXT_MAX_LEN 8

/* What a text says of one opcode. */
struct op_text {
	bool present;
	bool payload;
	char name[NAME_MAX_LEN];
	char ext[EXT_MAX_LEN];
};

/* The extension's name as the texts spell it. */
static const char *ext_name(uint8_t ext)
{
	switch (ext) {
	case SRNIC_EXT_DATA:
		return "data";
	case SRNIC_EXT_ACK:
		return "ack";
	case SRNIC_EXT_HELLO:
		return "hello";
	default:
		return "none";
	}
}

static unsigned ext_len(uint8_t ext)
{
	switch (ext) {
	case SRNIC_EXT_DATA:
		return SRNIC_DATA_XLEN;
	case SRNIC_EXT_ACK:
		return SRNIC_ACK_XLEN;
	default:
		return SRNIC_HELLO_XLEN;
	}
}

static void test_table(void)
{
	unsigned op;

	for (op = 0; op <= UINT8_MAX; op++) {
		const struct srnic_op_info *i = srnic_op_entry(op);
		bool known = op != 0 && op < SRNIC_OP_MAX;

		if (!CHECK(known == (i->ext != SRNIC_EXT_NONE),
			   "opcode %u: %s an entry", op,
			   known ? "lacks" : "has"))
			continue;
		if (!known) {
			CHECK(srnic_wire_hlen(op) == 0 && !i->props && !i->name,
			      "opcode %u: a non-opcode with properties", op);
			continue;
		}
		CHECK(i->name && i->check, "opcode %u: no name or check", op);
		CHECK(i->hlen == SRNIC_ETH_HLEN + SRNIC_BASE_HLEN +
					 ext_len(i->ext) +
					 (op == SRNIC_OP_TP_READ_REQ
						  ? SRNIC_TP_XLEN
						  : 0),
		      "%s: header length %u", srnic_op_name(op), i->hlen);
		/* (the budget of packets with payload) */
		CHECK(!(i->props & SRNIC_OPF_PAYLOAD) ||
			      i->hlen + ((i->props & SRNIC_OPF_XRC)
						 ? SRNIC_XRC_XLEN
						 : 0) <=
				      SRNIC_MAX_HLEN,
		      "%s: headers longer than SRNIC_MAX_HLEN",
		      srnic_op_name(op));
		CHECK(!(i->props & SRNIC_OPF_CONTROL) ==
			      (i->ext != SRNIC_EXT_HELLO),
		      "%s: control frames are the ones with the hello "
		      "extension", srnic_op_name(op));
		CHECK((i->props & SRNIC_OPF_GROUP) || !i->group_not,
		      "%s: group_not without SRNIC_OPF_GROUP",
		      srnic_op_name(op));
		/* (what names the responder's memory is a request with the
		 * data extension, where rkey and va are) */
		CHECK(!(i->props & SRNIC_OPF_REMOTE) ||
			      ((i->props & SRNIC_OPF_REQUEST) &&
			       i->ext == SRNIC_EXT_DATA),
		      "%s: SRNIC_OPF_REMOTE on no request with rkey and va",
		      srnic_op_name(op));
		CHECK(!(i->props & SRNIC_OPF_RD_ATOMIC) ||
			      (i->props & SRNIC_OPF_REMOTE),
		      "%s: SRNIC_OPF_RD_ATOMIC names no remote memory",
		      srnic_op_name(op));
	}
}

static FILE *open_source(const char *rel)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", SRNIC_SOURCE_ROOT, rel);
	f = fopen(path, "r");
	CHECK(f != NULL, "cannot read %s", path);
	return f;
}

/* A line of srnic.lua's OPS: [N] = {name = "X", ext = "Y", payload = B}, */
static bool parse_lua_line(const char *line, unsigned *op, struct op_text *t)
{
	char payload[8];

	if (sscanf(line, " [%u] = {name = \"%31[^\"]\", ext = \"%7[^\"]\", "
			 "payload = %7[a-z]}",
		   op, t->name, t->ext, payload) != 4)
		return false;
	t->payload = !strcmp(payload, "true");
	return true;
}

/* A row of the doc's Opcodes table: | N | NAME | ext | payload ... | */
static bool parse_doc_line(const char *line, unsigned *op, struct op_text *t)
{
	int rest;

	if (sscanf(line, "| %u | %31[A-Z_] | %7[a-z] | %n", op, t->name,
		   t->ext, &rest) != 3)
		return false;
	/* The payload column says "none" (maybe with more) or what it is. */
	t->payload = strncmp(line + rest, "none", 4) != 0;
	return true;
}

/* Reads what the file at rel says of each opcode into texts[256]: the
 * lines after the first one starting with `start`, up to the end of that
 * block (a Lua table's closing brace, the next Markdown section). */
static void read_texts(const char *rel, const char *start,
		       bool (*parse)(const char *, unsigned *,
				     struct op_text *),
		       struct op_text *texts)
{
	FILE *f = open_source(rel);
	bool in = false;
	char line[4096];
	struct op_text t;
	unsigned op;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!in) {
			in = !strncmp(line, start, strlen(start));
			continue;
		}
		if (line[0] == '}' || !strncmp(line, "## ", 3))
			break;
		memset(&t, 0, sizeof(t));
		if (!parse(line, &op, &t))
			continue;
		if (!CHECK(op <= UINT8_MAX && !texts[op].present,
			   "%s: opcode %u twice or out of range", rel, op))
			continue;
		t.present = true;
		texts[op] = t;
	}
	fclose(f);
}

/* Whether what rel says of each opcode is what the table says. */
static void compare(const char *rel, const struct op_text *texts)
{
	unsigned op, n = 0;

	for (op = 0; op <= UINT8_MAX; op++) {
		const struct srnic_op_info *i = srnic_op_entry(op);
		const struct op_text *t = &texts[op];

		if (!CHECK(t->present == (i->ext != SRNIC_EXT_NONE),
			   "%s: opcode %u (%s) %s", rel, op, srnic_op_name(op),
			   t->present ? "is no opcode" : "missing"))
			continue;
		if (!t->present)
			continue;
		n++;
		CHECK(!strcmp(t->name, i->name), "%s: opcode %u is %s, not %s",
		      rel, op, i->name, t->name);
		CHECK(!strcmp(t->ext, ext_name(i->ext)),
		      "%s: %s has the %s extension, not %s", rel, i->name,
		      ext_name(i->ext), t->ext);
		CHECK(t->payload == !!(i->props & SRNIC_OPF_PAYLOAD),
		      "%s: %s with%s payload, unlike the table", rel,
		      i->name, t->payload ? "" : "out");
	}
	CHECK(n == SRNIC_OP_MAX - 1, "%s: %u opcodes of %u", rel, n,
	      SRNIC_OP_MAX - 1);
}

int main(void)
{
	static struct op_text lua[UINT8_MAX + 1], doc[UINT8_MAX + 1];

	test_table();
	read_texts("tools/wireshark/srnic.lua", "local OPS = {",
		   parse_lua_line, lua);
	compare("tools/wireshark/srnic.lua", lua);
	read_texts("docs/wire-protocol.md", "## Opcodes", parse_doc_line, doc);
	compare("docs/wire-protocol.md", doc);
	return check_summary("test_wire_tables");
}
