/* SPDX-License-Identifier: MIT */
/*
 * srnic-conf FILE [KEY]: a node's configuration as srnicd and the provider
 * read it (the same parser and checks, src/engine/config.c), for scripts
 * that would otherwise parse the file again (./srnic).
 *
 *   srnic-conf FILE        every key as one JSON object, defaults filled in,
 *                          with "nports" and "ndev" (the ports and verbs
 *                          devices the node has)
 *   srnic-conf FILE KEY    KEY's value alone: one line, or one line a port
 *                          (port, weight, crc, link, device) or a service
 *
 * A bad file exits 1 with the parser's message; an unknown KEY exits 2.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "srnic_config.h"

/* Values go out as JSON, or as plain lines (one a value) for a shell. */
struct out {
	bool json;
	unsigned n;	/* values written in the current list */
};

static void begin_value(struct out *o)
{
	if (o->json && o->n++)
		fputs(", ", stdout);
}

static void end_value(const struct out *o)
{
	if (!o->json)
		putchar('\n');
}

static void put_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void put_str(struct out *o, const char *s)
{
	begin_value(o);
	if (o->json)
		put_json_string(s);
	else
		fputs(s, stdout);
	end_value(o);
}

static void put_uint(struct out *o, unsigned v)
{
	begin_value(o);
	printf("%u", v);
	end_value(o);
}

static void put_bool(struct out *o, int v)
{
	begin_value(o);
	fputs(o->json ? (v ? "true" : "false") : (v ? "yes" : "no"), stdout);
	end_value(o);
}

static void begin_list(struct out *o)
{
	o->n = 0;
	if (o->json)
		putchar('[');
}

static void end_list(struct out *o)
{
	if (o->json)
		putchar(']');
	o->n = 0;
}

/* A service: an object in JSON, its configuration line in plain text. */
static void put_service(struct out *o, const struct srnic_service_conf *sv)
{
	const char *failback = sv->failback ? "auto" : "expire";
	const char *mode = sv->mode == SRNIC_SVC_SWITCH ? "switch" : "group";
	struct in_addr a = { .s_addr = htonl(sv->ipv4) };
	char ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &a, ip, sizeof(ip));
	begin_value(o);
	if (o->json)
		printf("{\"name\": \"%s\", \"ipv4\": \"%s\", \"prio\": %u, "
		       "\"failback\": \"%s\", \"mode\": \"%s\"}", sv->name, ip,
		       sv->prio, failback, mode);
	else
		printf("%s %s prio=%u failback=%s mode=%s", sv->name, ip,
		       sv->prio, failback, mode);
	end_value(o);
}

/* A route: its configuration line, a string in JSON too. */
static void put_route(struct out *o, const struct srnic_route_conf *r)
{
	struct in_addr a = { .s_addr = htonl(r->prefix) };
	struct in_addr g = { .s_addr = htonl(r->gw) };
	char line[128], prefix[INET6_ADDRSTRLEN], gw[INET6_ADDRSTRLEN];
	int n;

	if (r->v6) {
		inet_ntop(AF_INET6, r->prefix6, prefix, sizeof(prefix));
		inet_ntop(AF_INET6, r->gw6, gw, sizeof(gw));
	} else {
		inet_ntop(AF_INET, &a, prefix, sizeof(prefix));
		inet_ntop(AF_INET, &g, gw, sizeof(gw));
	}
	n = snprintf(line, sizeof(line), "%s/%u via %s", prefix, r->len, gw);
	if (r->port >= 0)
		snprintf(line + n, sizeof(line) - n, " port %d", r->port);
	put_str(o, line);
}

static void put_ipv4(struct out *o, uint32_t ip)
{
	struct in_addr a = { .s_addr = htonl(ip) };
	char text[INET_ADDRSTRLEN];

	put_str(o, inet_ntop(AF_INET, &a, text, sizeof(text)));
}

/* An IPv6 address, with a prefix length when len is not 0. */
static void put_ipv6(struct out *o, const uint8_t a[16], unsigned len)
{
	char text[INET6_ADDRSTRLEN + 4];

	inet_ntop(AF_INET6, a, text, INET6_ADDRSTRLEN);
	if (len)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "/%u", len);
	put_str(o, text);
}

/* One value a port, or the services, routes or peers: a list. */
static void put_list(struct out *o, const struct srnic_config *cfg,
		     const struct srnic_conf_key *k, const void *at)
{
	unsigned i;
	bool ports = k->kind == SRNIC_CONF_PORT_STR ||
		     k->kind == SRNIC_CONF_PORT_U8 ||
		     k->kind == SRNIC_CONF_PORT_BOOL;

	begin_list(o);
	for (i = 0; k->kind == SRNIC_CONF_SERVICES && i < cfg->nsvc; i++)
		put_service(o, &((const struct srnic_service_conf *)at)[i]);
	for (i = 0; k->kind == SRNIC_CONF_ROUTES && i < cfg->nroutes; i++)
		put_route(o, &cfg->route[i]);
	for (i = 0; k->kind == SRNIC_CONF_PEERS && i < cfg->npeers; i++)
		if (cfg->has_ipv6)
			put_ipv6(o, cfg->peer6[i], 0);
		else
			put_ipv4(o, cfg->peer[i]);
	for (i = 0; ports && i < cfg->nports; i++)
		if (k->kind == SRNIC_CONF_PORT_STR)
			put_str(o, (const char *)at + i * k->size);
		else if (k->kind == SRNIC_CONF_PORT_BOOL)
			put_bool(o, ((const uint8_t *)at)[i]);
		else
			put_uint(o, ((const uint8_t *)at)[i]);
	end_list(o);
}

static void put_key(struct out *o, const struct srnic_config *cfg,
		    const struct srnic_conf_key *k)
{
	const void *at = (const char *)cfg + k->offset;
	const uint8_t *m = at;
	char text[sizeof("xx:xx:xx:xx:xx:xx")], ip[INET_ADDRSTRLEN + 3];
	struct in_addr a;

	switch (k->kind) {
	case SRNIC_CONF_UINT:
		put_uint(o, *(const unsigned *)at);
		break;
	case SRNIC_CONF_BOOL:
		put_bool(o, *(const int *)at);
		break;
	case SRNIC_CONF_ENUM:
		put_str(o, k->names[*(const int *)at]);
		break;
	case SRNIC_CONF_STR:
	case SRNIC_CONF_PATH:
		put_str(o, at);
		break;
	case SRNIC_CONF_IPV6:
		/* (the node's, the one key of the kind) */
		if (cfg->has_ipv6)
			put_ipv6(o, at, cfg->ipv6_len);
		else
			put_str(o, "");
		break;
	case SRNIC_CONF_IPV4:
		/* (an IPv6 node has no IPv4 address: its id is no
		 * address of the network's) */
		if (k->offset == offsetof(struct srnic_config, ipv4) &&
		    cfg->has_ipv6) {
			put_str(o, "");
			break;
		}
		a.s_addr = htonl(*(const uint32_t *)at);
		inet_ntop(AF_INET, &a, ip, sizeof(ip));
		/* (the node's, with its subnet where it has one) */
		if (k->offset == offsetof(struct srnic_config, ipv4) &&
		    cfg->ipv4_len)
			snprintf(ip + strlen(ip), sizeof(ip) - strlen(ip),
				 "/%u", cfg->ipv4_len);
		put_str(o, ip);
		break;
	case SRNIC_CONF_MAC:
		snprintf(text, sizeof(text), "%02x:%02x:%02x:%02x:%02x:%02x",
			 m[0], m[1], m[2], m[3], m[4], m[5]);
		put_str(o, text);
		break;
	default:
		put_list(o, cfg, k, at);
	}
}

static void print_json(const struct srnic_config *cfg)
{
	struct out o = { .json = true };
	unsigned i;

	printf("{\"path\": ");
	put_json_string(cfg->path);
	for (i = 0; i < srnic_conf_nkeys; i++) {
		printf(", \"%s\": ", srnic_conf_keys[i].name);
		o.n = 0;
		put_key(&o, cfg, &srnic_conf_keys[i]);
	}
	printf(", \"nports\": %u, \"ndev\": %u}\n", cfg->nports, cfg->ndev);
}

/* KEY's value as plain lines; -1 when there is no such key. */
static int print_key(const struct srnic_config *cfg, const char *name)
{
	const struct srnic_conf_key *k = srnic_config_key(name);
	struct out o = { .json = false };

	if (!strcmp(name, "nports"))
		printf("%u\n", cfg->nports);
	else if (!strcmp(name, "ndev"))
		printf("%u\n", cfg->ndev);
	else if (k)
		put_key(&o, cfg, k);
	else
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct srnic_config cfg;
	char err[640];

	if (argc < 2 || argc > 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: srnic-conf FILE [KEY]\n");
		return 2;
	}
	if (srnic_config_load_file(&cfg, argv[1], err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (argc == 2) {
		print_json(&cfg);
		return 0;
	}
	if (print_key(&cfg, argv[2])) {
		fprintf(stderr, "srnic-conf: no key '%s' (docs/configuration.md "
			"lists them)\n", argv[2]);
		return 2;
	}
	return 0;
}
