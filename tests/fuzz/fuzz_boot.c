/*
 * fuzz_boot.c — libFuzzer target for what a process parses of what its
 * launcher tells it (core/bootstrap.c, compiled in here whole to reach its
 * static parsers): the list of node-local peers (PMIX_LOCAL_PEERS,
 * "0,1,2" or ranges "0-3") and the namespace that becomes part of every
 * per-job file name (ibx_boot_sanitize_id).
 *
 * Input: two bytes of job size, two of our rank, one of the id buffer's
 * length, then the text, which is both the peer list and the namespace.
 *
 *   make fuzz && build/fuzz/fuzz_boot $(mktemp -d) tests/fuzz/corpus/fuzz_boot
 */
#include "bootstrap.c"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_peers(const char *s, int size, int self)
{
	int *ranks = NULL, n = parse_local_peers(s, size, self, &ranks);
	bool have_self = false;

	if (n < 0) {
		FUZZ_FAIL_IF(ranks, "parse_local_peers failed but wrote its out-parameter");
		return;
	}
	/* ascending, without duplicates, within the job, ourselves included */
	FUZZ_FAIL_IF(n < 1 || n > size || !ranks, "accepted peer list: count out of range");
	for (int i = 0; i < n; i++) {
		FUZZ_FAIL_IF(ranks[i] < 0 || ranks[i] >= size ||
				 (i > 0 && ranks[i] <= ranks[i - 1]),
			     "accepted peer list: not ascending, duplicated or outside the job");
		have_self |= ranks[i] == self;
	}
	FUZZ_FAIL_IF(!have_self, "accepted peer list without our own rank");
	free(ranks);
}

static void check_id(const char *in, size_t outlen)
{
	char *out = malloc(outlen ? outlen : 1), again[IBX_BOOT_JOB_ID_MAX];
	size_t len;

	if (!out)
		return;
	ibx_boot_sanitize_id(in, out, outlen);
	if (outlen == 0)
		goto out;
	/* one safe file-name component, never empty, never hidden */
	len = strlen(out);
	FUZZ_FAIL_IF(len >= outlen || (len == 0 && outlen > 1) || out[0] == '.',
		     "job id too long, empty or hidden");
	for (size_t i = 0; i < len; i++) {
		char c = out[i];

		FUZZ_FAIL_IF(!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			       (c >= '0' && c <= '9') || c == '_' || c == '.'),
			     "job id with a character unsafe in a file name");
	}
	/* deterministic; a short safe namespace is kept as it is */
	if (outlen <= sizeof(again)) {
		ibx_boot_sanitize_id(in, again, outlen);
		FUZZ_FAIL_IF(strcmp(out, again), "job id not deterministic");
	}
	FUZZ_FAIL_IF(
	    *in && strlen(in) < outlen && in[0] != '.' &&
		strspn(in, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") ==
		    strlen(in) &&
		strcmp(out, in),
	    "safe short namespace not kept as it is");
out:
	free(out);
}

/* The two refusals are told apart: a list that does not parse (-1), and a
 * well-formed one without our rank (-2: two nodes under one host name). */
static void check_refusals(void)
{
	int *r = NULL;

	FUZZ_FAIL_IF(parse_local_peers("0,1", 4, 2, &r) != -2 || r,
		     "a well-formed list without our rank is not -2");
	FUZZ_FAIL_IF(parse_local_peers("0,x", 4, 0, &r) != -1 || r, "a malformed list is not -1");
	FUZZ_FAIL_IF(parse_local_peers("2-3", 4, 2, &r) != 2 || !r, "\"2-3\" not 2 peers");
	free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool checked;
	int job, self;
	size_t outlen;
	char *s;

	if (!checked) {
		check_refusals();
		checked = true;
	}

	if (size < 5 || size > 4096)
		return 0;
	job = 1 + (data[0] << 8 | data[1]) % 4096;
	self = (data[2] << 8 | data[3]) % job;
	outlen = data[4] % (IBX_BOOT_JOB_ID_MAX + 8);
	s = malloc(size - 5 + 1);
	if (!s)
		return 0;
	memcpy(s, data + 5, size - 5);
	s[size - 5] = '\0';
	check_peers(s, job, self);
	check_id(s, outlen);
	free(s);
	return 0;
}
