/* tests/host/test_recstore.c - the last screen's record store (kernel/report/recstore.c):
 * whole lines or none, the closing reserve, drops counted, no store said so. */
#include "kernel/report/recstore.h"
#include "test.h"

static uint8_t buf[RECSTORE_RESERVE + 100];

static void add(const char *a, const char *b)
{
    const char *piece[2] = { a, b };
    size_t len[2] = { strlen(a), strlen(b) };
    recstore_add(piece, len, 2);
}

TEST(recstore_keeps_whole_lines_and_the_closing_reserve)
{
    struct recstore_info si;
    recstore_init(buf, sizeof(buf), 0);
    add("TLR 00000000 ", "{\"type\":\"boot\"}\n");                 /* 29 bytes */
    add("TLR 00000000 ", "{\"type\":\"x\",\"pad\":\"0123456789012345678901234567890123456789"
                         "01234567890123456789\"}\n");              /* too long for the rest */
    add("TLR 00000000 ", "{\"type\":\"a\"}\n");
    recstore_get(&si);
    CHECK_EQ_U64(si.records, 2);
    CHECK_EQ_U64(si.dropped, 1);
    CHECK_EQ_U64(si.bytes, 29 + 26);
    CHECK(memcmp(si.data, "TLR 00000000 {\"type\":\"boot\"}\nTLR 00000000 {\"type\":\"a\"}\n",
                 si.bytes) == 0);
    recstore_closing();                        /* the reserve opens for qr_store and end */
    add("TLR 00000000 ", "{\"type\":\"end\",\"records\":4}\n");
    recstore_get(&si);
    CHECK_EQ_U64(si.records, 3);
    CHECK(si.off_reason == NULL);
}

TEST(recstore_without_memory_says_why)
{
    struct recstore_info si;
    recstore_init(NULL, 0, "no free RAM");
    add("TLR 00000000 ", "{\"type\":\"boot\"}\n");
    recstore_get(&si);
    CHECK_EQ_U64(si.cap, 0);
    CHECK_EQ_U64(si.records, 0);
    CHECK_EQ_U64(si.dropped, 1);
    CHECK_EQ_STR(si.off_reason, "no free RAM");
}
