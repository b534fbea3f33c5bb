/* tests/host/smbios_build.c - see smbios_build.h. */
#include "smbios_build.h"

#include <string.h>

const uint8_t sm_guid_smbios[16] = { 0x31, 0x2d, 0x9d, 0xeb, 0x88, 0x2d, 0xd3, 0x11,
                                     0x9a, 0x16, 0x00, 0x90, 0x27, 0x3f, 0xc1, 0x4d };
const uint8_t sm_guid_smbios3[16] = { 0x44, 0x15, 0xfd, 0xf2, 0x94, 0x97, 0x2c, 0x4a,
                                      0x99, 0x2e, 0xe5, 0xbb, 0xcf, 0x20, 0xe3, 0x94 };

void sm_begin(struct sm_table *t)
{
    memset(t, 0, sizeof(*t));
}

static void put(struct sm_table *t, const void *p, size_t n)
{
    if (t->len + n > sizeof(t->b))
        n = sizeof(t->b) - t->len;
    memcpy(t->b + t->len, p, n);
    t->len += n;
}

void sm_struct(struct sm_table *t, const uint8_t *formatted, size_t len, const char **strings)
{
    if (t->n < SM_MAX_STRUCTS)
        t->off[t->n++] = t->len;
    put(t, formatted, len);
    static const uint8_t nul[2] = { 0, 0 };
    if (!strings || !strings[0]) {
        put(t, nul, 2);
        return;
    }
    for (unsigned i = 0; strings[i]; i++)
        put(t, strings[i], strlen(strings[i]) + 1);
    put(t, nul, 1);
}

void sm_end(struct sm_table *t)
{
    const uint8_t end[4] = { 127, 4, 0xFE, 0xFF };
    sm_struct(t, end, sizeof(end), NULL);
}

size_t sm_offset_of(const struct sm_table *t, unsigned i)
{
    return i < t->n ? t->off[i] : t->len;
}

uint8_t sm_sum(const uint8_t *p, size_t n)
{
    uint8_t s = 0;
    while (n--)
        s = (uint8_t)(s + *p++);
    return s;
}

void sm_fix_eps2(uint8_t *e)
{
    e[0x15] = 0;
    e[0x15] = (uint8_t)-sm_sum(e + 0x10, 15);
    e[0x04] = 0;
    e[0x04] = (uint8_t)-sm_sum(e, e[0x05] <= 0x1F ? e[0x05] : 0x1F);
}

void sm_fix_eps3(uint8_t *e)
{
    e[0x05] = 0;
    e[0x05] = (uint8_t)-sm_sum(e, 0x18);
}

void sm_eps2(uint8_t *e, uint8_t major, uint8_t minor, uint32_t table_phys, uint16_t table_len,
             uint16_t structures)
{
    memset(e, 0, 0x1F);
    memcpy(e, "_SM_", 4);
    e[0x05] = 0x1F;
    e[0x06] = major, e[0x07] = minor;
    e[0x08] = 0x40;                                 /* largest structure, not checked */
    memcpy(e + 0x10, "_DMI_", 5);
    memcpy(e + 0x16, &table_len, 2);
    memcpy(e + 0x18, &table_phys, 4);
    memcpy(e + 0x1C, &structures, 2);
    e[0x1E] = (uint8_t)(major << 4 | (minor & 0xF));
    sm_fix_eps2(e);
}

void sm_eps3(uint8_t *e, uint8_t major, uint8_t minor, uint64_t table_phys, uint32_t table_max)
{
    memset(e, 0, 0x18);
    memcpy(e, "_SM3_", 5);
    e[0x06] = 0x18;
    e[0x07] = major, e[0x08] = minor;
    e[0x0A] = 1;                                    /* entry point revision 3.0 */
    memcpy(e + 0x0C, &table_max, 4);
    memcpy(e + 0x10, &table_phys, 8);
    sm_fix_eps3(e);
}
