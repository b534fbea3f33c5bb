/* drivers/acpi.h - ACPI table discovery: RSDP, RSDT/XSDT, MADT, HPET, FADT, DMAR, SPCR
 * (spcr.h), MCFG (mcfg.h) and the DSDT's header, checksums verified.
 *
 * Follows the ACPI Specification 6.5: 5.2.5 RSDP, 5.2.6 table header, 5.2.7 RSDT, 5.2.8 XSDT,
 * 5.2.9 FADT, 5.2.12 MADT, 5.2.3.2 Generic Address Structure; and the IA-PC HPET
 * Specification 1.0a, 3.2.4 (the HPET description table).
 *
 * A pure parser: it touches no memory of its own accord but asks the caller's map() for
 * every range it reads. The kernel answers from its direct map; host tests answer with a
 * buffer holding exactly one fixture region, so ASan catches any read past what was asked.
 *
 * Trust nothing: a table's 36-byte header is mapped first, its length bounded
 * (ACPI_HEADER_BYTES .. ACPI_TABLE_MAX_BYTES), the whole length mapped and the checksum
 * verified before any field is used. A table that fails is listed with the check that
 * failed (`reason`) and parsing goes on without it. The same for the RSDP.
 *
 * Quirks handled:
 *  - RSDP revision 0 is 20 bytes: its length/XSDT fields do not exist and are not read.
 *  - XSDT entries are 64-bit addresses at offset 36, so never 8-byte aligned: all fields
 *    are read through packed structs or bytewise.
 *  - A present but broken XSDT falls back to the RSDT (noted in root_note).
 *  - A signature listed twice: the first table that passes is used, later ones are listed
 *    with reason "duplicate, first used".
 *  - ACPI 1.0 FADTs are 116 bytes: no X_ fields, and IAPC_BOOT_ARCH was reserved before
 *    FADT revision 2, so it is only decoded from revision 2 on.
 *  - X_PM_TMR_BLK is preferred when it is a system-I/O GAS with a non-zero port; a GAS in
 *    another space is ignored (noted) and PM_TMR_BLK used.
 *
 * Reason strings are stable (they appear in records, docs/report-format.md):
 *  RSDP:   "not found", "not readable", "signature mismatch", "checksum",
 *          "extended checksum", "length shorter than RSDP v2", "length over cap",
 *          "length past mapped area"
 *  tables: "null address", "header not readable", "length shorter than header",
 *          "length over 1 MiB cap", "length past mapped area", "checksum",
 *          "signature mismatch", "duplicate, first used"
 *  facts:  "no table", "table rejected" (the table's own reason in table_reason), and the
 *          decoding reasons documented at each struct. */
#ifndef TICKLAB_DRIVERS_ACPI_H
#define TICKLAB_DRIVERS_ACPI_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ticklab/mcfg.h"
#include "ticklab/spcr.h"

/* ---- reading memory ----------------------------------------------------------------------- */

/* Returns a pointer to the bytes at [phys, phys + len), or NULL when any of them is not
 * readable. Pointers handed out stay valid until acpi_parse() returns. */
struct acpi_mem {
    const void *(*map)(void *ctx, uint64_t phys, size_t len);
    void *ctx;
};

/* ---- table layouts (packed: ACPI fields are unaligned) ------------------------------------ */

#define ACPI_RSDP_V1_BYTES   20u
#define ACPI_RSDP_V2_BYTES   36u
#define ACPI_RSDP_MAX_BYTES  1024u      /* ACPI 2.0..6.5 say 36: far more is corruption */
#define ACPI_HEADER_BYTES    36u
#define ACPI_TABLE_MAX_BYTES (1u << 20) /* a sanity cap; real DSDTs are well under this */

struct acpi_rsdp {
    char signature[8];          /* "RSD PTR " */
    uint8_t checksum;           /* bytes 0..19 sum to 0 */
    char oem_id[6];
    uint8_t revision;           /* 0: ACPI 1.0 (20 bytes); 2: ACPI 2.0+ */
    uint32_t rsdt_addr;
    /* revision >= 2 only: */
    uint32_t length;            /* of the whole structure */
    uint64_t xsdt_addr;
    uint8_t ext_checksum;       /* bytes 0..length-1 sum to 0 */
    uint8_t reserved[3];
} __attribute__((packed));
_Static_assert(offsetof(struct acpi_rsdp, rsdt_addr) == 16, "RSDP layout");
_Static_assert(offsetof(struct acpi_rsdp, length) == ACPI_RSDP_V1_BYTES, "RSDP layout");
_Static_assert(offsetof(struct acpi_rsdp, xsdt_addr) == 24, "RSDP layout");
_Static_assert(offsetof(struct acpi_rsdp, ext_checksum) == 32, "RSDP layout");
_Static_assert(sizeof(struct acpi_rsdp) == ACPI_RSDP_V2_BYTES, "RSDP layout");

struct acpi_header {
    char signature[4];
    uint32_t length;            /* of the whole table, header included */
    uint8_t revision;
    uint8_t checksum;           /* bytes 0..length-1 sum to 0 */
    char oem_id[6];
    char oem_table_id[8];
    uint32_t oem_revision;
    uint32_t creator_id;
    uint32_t creator_revision;
} __attribute__((packed));
_Static_assert(offsetof(struct acpi_header, checksum) == 9, "header layout");
_Static_assert(offsetof(struct acpi_header, oem_id) == 10, "header layout");
_Static_assert(sizeof(struct acpi_header) == ACPI_HEADER_BYTES, "header layout");

/* Generic Address Structure (5.2.3.2). */
struct acpi_gas {
    uint8_t space;              /* ACPI_GAS_MEMORY, ACPI_GAS_IO, ... */
    uint8_t bit_width;
    uint8_t bit_offset;
    uint8_t access_size;
    uint64_t address;
} __attribute__((packed));
_Static_assert(sizeof(struct acpi_gas) == 12, "GAS layout");
#define ACPI_GAS_MEMORY 0
#define ACPI_GAS_IO     1

/* MADT ("APIC"): the fixed part, then variable entries {type, length, ...}. */
struct acpi_madt_fixed {
    struct acpi_header h;
    uint32_t lapic_addr;
    uint32_t flags;
#define ACPI_MADT_PCAT_COMPAT (1u << 0)    /* dual 8259s present: mask them before using IOAPIC */
} __attribute__((packed));
_Static_assert(sizeof(struct acpi_madt_fixed) == 44, "MADT layout");

#define ACPI_MADT_LAPIC          0x0
#define ACPI_MADT_IOAPIC         0x1
#define ACPI_MADT_OVERRIDE       0x2
#define ACPI_MADT_NMI_SOURCE     0x3
#define ACPI_MADT_LAPIC_NMI      0x4
#define ACPI_MADT_LAPIC_ADDR     0x5
#define ACPI_MADT_X2APIC         0x9
#define ACPI_MADT_X2APIC_NMI     0xA
#define ACPI_MADT_CPU_ENABLED        (1u << 0)
#define ACPI_MADT_CPU_ONLINE_CAPABLE (1u << 1)   /* disabled now, may be brought up */

struct acpi_madt_lapic    { uint8_t type, length, uid, apic_id; uint32_t flags; }
    __attribute__((packed));
struct acpi_madt_ioapic   { uint8_t type, length, id, reserved; uint32_t addr, gsi_base; }
    __attribute__((packed));
struct acpi_madt_override { uint8_t type, length, bus, irq; uint32_t gsi; uint16_t flags; }
    __attribute__((packed));
struct acpi_madt_nmi_src  { uint8_t type, length; uint16_t flags; uint32_t gsi; }
    __attribute__((packed));
struct acpi_madt_lapic_nmi { uint8_t type, length, uid; uint16_t flags; uint8_t lint; }
    __attribute__((packed));
struct acpi_madt_lapic_addr { uint8_t type, length; uint16_t reserved; uint64_t addr; }
    __attribute__((packed));
struct acpi_madt_x2apic   { uint8_t type, length; uint16_t reserved; uint32_t x2apic_id, flags, uid; }
    __attribute__((packed));
struct acpi_madt_x2apic_nmi { uint8_t type, length; uint16_t flags; uint32_t uid; uint8_t lint,
                              reserved[3]; } __attribute__((packed));
_Static_assert(sizeof(struct acpi_madt_lapic) == 8, "MADT type 0");
_Static_assert(offsetof(struct acpi_madt_ioapic, gsi_base) == 8, "MADT type 1");
_Static_assert(sizeof(struct acpi_madt_ioapic) == 12, "MADT type 1");
_Static_assert(offsetof(struct acpi_madt_override, flags) == 8, "MADT type 2");
_Static_assert(sizeof(struct acpi_madt_override) == 10, "MADT type 2");
_Static_assert(sizeof(struct acpi_madt_nmi_src) == 8, "MADT type 3");
_Static_assert(offsetof(struct acpi_madt_lapic_nmi, lint) == 5, "MADT type 4");
_Static_assert(offsetof(struct acpi_madt_lapic_addr, addr) == 4, "MADT type 5");
_Static_assert(sizeof(struct acpi_madt_x2apic) == 16, "MADT type 9");
_Static_assert(offsetof(struct acpi_madt_x2apic_nmi, lint) == 8, "MADT type 0xA");
_Static_assert(sizeof(struct acpi_madt_x2apic_nmi) == 12, "MADT type 0xA");

/* HPET description table (HPET spec 1.0a, 3.2.4). */
struct acpi_hpet_desc {
    struct acpi_header h;
    uint32_t block_id;          /* event timer block ID, decoded below */
    struct acpi_gas base;       /* must be system memory */
    uint8_t hpet_number;
    uint16_t min_tick;          /* main-counter ticks: smallest periodic interval w/o loss */
    uint8_t page_protection;
} __attribute__((packed));
_Static_assert(offsetof(struct acpi_hpet_desc, base) == 40, "HPET layout");
_Static_assert(offsetof(struct acpi_hpet_desc, hpet_number) == 52, "HPET layout");
_Static_assert(offsetof(struct acpi_hpet_desc, min_tick) == 53, "HPET layout");
_Static_assert(sizeof(struct acpi_hpet_desc) == 56, "HPET layout");
#define ACPI_HPET_ID_REV(id)         ((id) & 0xFFu)
#define ACPI_HPET_ID_COMPARATORS(id) ((((id) >> 8) & 0x1Fu) + 1)   /* field is count - 1 */
#define ACPI_HPET_ID_COUNTER_64      (1u << 13)
#define ACPI_HPET_ID_LEGACY_CAPABLE  (1u << 15)
#define ACPI_HPET_ID_VENDOR(id)      ((id) >> 16)

/* FADT ("FACP"), up to and including X_PM_TMR_BLK: what ticklab reads. */
struct acpi_fadt_fields {
    struct acpi_header h;
    uint32_t firmware_ctrl, dsdt;
    uint8_t reserved0, pm_profile;
    uint16_t sci_int;
    uint32_t smi_cmd;
    uint8_t acpi_enable, acpi_disable, s4bios_req, pstate_cnt;
    uint32_t pm1a_evt_blk, pm1b_evt_blk, pm1a_cnt_blk, pm1b_cnt_blk, pm2_cnt_blk;
    uint32_t pm_tmr_blk;        /* I/O port of the PM timer, 0: none */
    uint32_t gpe0_blk, gpe1_blk;
    uint8_t pm1_evt_len, pm1_cnt_len, pm2_cnt_len;
    uint8_t pm_tmr_len;         /* 4 when the PM timer is supported */
    uint8_t gpe0_blk_len, gpe1_blk_len, gpe1_base, cst_cnt;
    uint16_t p_lvl2_lat, p_lvl3_lat, flush_size, flush_stride;
    uint8_t duty_offset, duty_width, day_alrm, mon_alrm;
    uint8_t century;            /* CMOS index of the century register, 0: none */
    uint16_t iapc_boot_arch;    /* FADT revision >= 2 */
    uint8_t reserved1;
    uint32_t flags;             /* end of the ACPI 1.0 FADT (116 bytes) */
    struct acpi_gas reset_reg;
    uint8_t reset_value;
    uint16_t arm_boot_arch;
    uint8_t minor_version;
    uint64_t x_firmware_ctrl, x_dsdt;
    struct acpi_gas x_pm1a_evt_blk, x_pm1b_evt_blk, x_pm1a_cnt_blk, x_pm1b_cnt_blk;
    struct acpi_gas x_pm2_cnt_blk;
    struct acpi_gas x_pm_tmr_blk;
} __attribute__((packed));
_Static_assert(offsetof(struct acpi_fadt_fields, dsdt) == 40, "FADT layout");
_Static_assert(offsetof(struct acpi_fadt_fields, sci_int) == 46, "FADT layout");
_Static_assert(offsetof(struct acpi_fadt_fields, pm_tmr_blk) == 76, "FADT layout");
_Static_assert(offsetof(struct acpi_fadt_fields, pm_tmr_len) == 91, "FADT layout");
_Static_assert(offsetof(struct acpi_fadt_fields, century) == 108, "FADT layout");
_Static_assert(offsetof(struct acpi_fadt_fields, iapc_boot_arch) == 109, "FADT layout");
_Static_assert(offsetof(struct acpi_fadt_fields, flags) == 112, "FADT layout");
_Static_assert(offsetof(struct acpi_fadt_fields, x_dsdt) == 140, "FADT layout");
_Static_assert(offsetof(struct acpi_fadt_fields, x_pm_tmr_blk) == 208, "FADT layout");
_Static_assert(sizeof(struct acpi_fadt_fields) == 220, "FADT layout");
#define ACPI_FADT_V1_BYTES        116u   /* ACPI 1.0: ends after flags */
#define ACPI_FADT_TMR_VAL_EXT     (1u << 8)   /* flags: the PM timer counts 32 bits, not 24 */
#define ACPI_FADT_HW_REDUCED      (1u << 20)  /* flags: no fixed hardware, hence no PM timer */
#define ACPI_IAPC_LEGACY_DEVICES  (1u << 0)
#define ACPI_IAPC_8042            (1u << 1)
#define ACPI_IAPC_VGA_ABSENT      (1u << 2)
#define ACPI_IAPC_MSI_UNSUPPORTED (1u << 3)
#define ACPI_IAPC_CMOS_RTC_ABSENT (1u << 5)

/* ---- what the parser found ---------------------------------------------------------------- */

#define ACPI_MAX_TABLES    64   /* tables listed; more are counted in tables_dropped */
#define ACPI_MAX_CPUS      256
#define ACPI_MAX_IOAPICS   16
#define ACPI_MAX_OVERRIDES 32
#define ACPI_MAX_NMIS      16

enum acpi_rsdp_source { ACPI_RSDP_NONE, ACPI_RSDP_LOADER, ACPI_RSDP_EBDA, ACPI_RSDP_BIOS_ROM };

struct acpi_rsdp_info {
    enum acpi_rsdp_source source;
    uint64_t phys;              /* where it was found; 0 for the loader's copy */
    uint32_t length;            /* bytes verified: 20 (revision 0) or the length field */
    uint8_t revision;
    char oem_id[7];
    uint32_t rsdt_phys;
    uint64_t xsdt_phys;         /* 0 below revision 2 */
    const char *reason;         /* source NONE: why (first failed check, or "not found") */
    const char *copy_reason;    /* the loader's copy was rejected for this, then the BIOS
                                   areas were searched; NULL otherwise */
};

/* One table met on the way: every entry of the root table used, both roots, the DSDT. The
 * header fields are copied as found (unverified when !ok), non-printable bytes as '?'. */
struct acpi_table {
    char sig[5];
    uint64_t phys;
    uint32_t length;            /* the header's claim, 0 when the header was not readable */
    uint8_t revision;
    char oem_id[7];
    bool ok;                    /* passed every check */
    bool used;                  /* the facts below come from it */
    const char *reason;         /* !ok: the failed check; ok: a note or NULL */
};

enum acpi_polarity { ACPI_POL_CONFORMS = 0, ACPI_POL_HIGH = 1, ACPI_POL_RESERVED = 2,
                     ACPI_POL_LOW = 3 };            /* MPS INTI flags bits 0..1 */
enum acpi_trigger { ACPI_TRIG_CONFORMS = 0, ACPI_TRIG_EDGE = 1, ACPI_TRIG_RESERVED = 2,
                    ACPI_TRIG_LEVEL = 3 };          /* MPS INTI flags bits 2..3 */

struct acpi_cpu {
    uint32_t apic_id;
    uint32_t uid;               /* ACPI processor UID */
    bool enabled, online_capable;
    bool x2apic;                /* from a type 9 entry */
};
struct acpi_ioapic {
    uint8_t id;
    uint32_t addr;
    uint32_t gsi_base;
};
struct acpi_override {
    uint8_t bus, irq;           /* bus 0: ISA; irq: the ISA IRQ */
    uint32_t gsi;
    enum acpi_polarity polarity;
    enum acpi_trigger trigger;
};
enum acpi_nmi_kind { ACPI_NMI_SOURCE, ACPI_NMI_LAPIC, ACPI_NMI_X2APIC };
struct acpi_nmi {
    enum acpi_nmi_kind kind;
    uint32_t gsi;               /* SOURCE */
    uint32_t uid;               /* LAPIC, X2APIC: processor UID; all ones = every processor */
    uint8_t lint;               /* LAPIC, X2APIC: LINT0 or LINT1 */
    enum acpi_polarity polarity;
    enum acpi_trigger trigger;
};

/* Decoding reason: "shorter than MADT fields". The walk over the entries stops (walk_reason)
 * at "entry length under 2" or "entry past table end"; entries before it are kept. */
struct acpi_madt {
    bool present;
    const char *reason, *table_reason;
    uint8_t revision;           /* the header's: 5 (ACPI 6.3) defined Online Capable */
    uint64_t lapic_addr;
    bool lapic_addr_overridden; /* a type 5 entry gave a 64-bit address */
    bool pcat_compat;
    uint32_t flags;
    struct acpi_cpu cpus[ACPI_MAX_CPUS];
    struct acpi_ioapic ioapics[ACPI_MAX_IOAPICS];
    struct acpi_override overrides[ACPI_MAX_OVERRIDES];
    struct acpi_nmi nmis[ACPI_MAX_NMIS];
    unsigned n_cpus, n_ioapics, n_overrides, n_nmis;
    unsigned cpus_dropped, ioapics_dropped, overrides_dropped, nmis_dropped; /* over the caps */
    unsigned entries;           /* entries walked */
    unsigned unknown_entries;   /* types ticklab does not decode (skipped) */
    unsigned short_entries;     /* shorter than their type's layout (skipped) */
    const char *walk_reason;    /* NULL: the walk reached the table's end */
};

/* Decoding reasons: "shorter than HPET table", "address not in system memory space",
 * "address zero". The decoded fields are filled even then, for the report. The period is
 * not here: it is read from the hardware (see acpi_hpet_period_ok). */
struct acpi_hpet_info {
    bool present;
    const char *reason, *table_reason;
    bool decoded;               /* the fields below come from a table (present or not) */
    uint64_t addr;
    uint8_t addr_space;
    uint32_t block_id;
    uint8_t hw_rev;
    unsigned comparators;
    bool counter_64bit, legacy_capable;
    uint16_t pci_vendor;
    uint8_t hpet_number;
    uint16_t min_tick;
    uint8_t page_protection;
};

/* DMAR (Intel VT-d specification, 8.1 "DMA Remapping Reporting Structure"): after the header,
 * the host address width (N - 1), the flags, 10 reserved bytes, then remapping structures
 * (not decoded: ticklab programs no IOMMU). Only the flags matter here: X2APIC_OPT_OUT asks
 * the OS to leave the local APIC in xAPIC mode (firmware that cannot run in x2APIC mode, or
 * whose SMM code expects xAPIC); Linux honours it unless firmware already enabled x2APIC. */
struct acpi_dmar_fixed {
    struct acpi_header h;
    uint8_t host_addr_width;
    uint8_t flags;
#define ACPI_DMAR_INTR_REMAP        (1u << 0)
#define ACPI_DMAR_X2APIC_OPT_OUT    (1u << 1)
#define ACPI_DMAR_DMA_CTRL_OPT_IN   (1u << 2)
    uint8_t reserved[10];
} __attribute__((packed));
_Static_assert(sizeof(struct acpi_dmar_fixed) == 48, "DMAR layout");

/* Decoding reason: "shorter than DMAR fields". */
struct acpi_dmar_info {
    bool present;
    const char *reason, *table_reason;
    uint8_t host_addr_width;    /* as in the table: the width is this + 1 bits */
    uint8_t flags;
    bool intr_remap, x2apic_opt_out;
};

/* Decoding reason: "shorter than ACPI 1.0 FADT". PM timer reasons: "hardware-reduced ACPI",
 * "no PM timer block", "port over 0xffff", "PM_TMR_LEN is not 4". */
struct acpi_fadt_info {
    bool present;
    const char *reason, *table_reason;
    uint8_t revision;
    uint32_t length;
    uint32_t flags;
    uint16_t sci_irq;
    uint8_t century;            /* CMOS index, 0: none */
    bool iapc_valid;            /* FADT revision >= 2 */
    uint16_t iapc_boot_arch;
    bool hw_reduced;
    uint64_t dsdt_phys;
    bool pm_timer_present;
    const char *pm_timer_reason;
    uint16_t pm_timer_port;
    bool pm_timer_32bit;        /* TMR_VAL_EXT */
    bool pm_timer_from_x;       /* the port came from X_PM_TMR_BLK */
    uint32_t pm_tmr_blk;        /* the raw fields, for the report */
    uint8_t pm_tmr_len;
    uint64_t x_pm_tmr_addr;
    const char *x_pm_tmr_note;  /* why a present X_PM_TMR_BLK was not used, or NULL */
    /* The switch from legacy (SMM) mode to ACPI mode (drivers/acpi_mode.h): SMI_CMD 0 means
     * ACPI-only hardware. PM1a/b_CNT from X_PM1x_CNT_BLK when it is a usable system-I/O
     * port, else from the 32-bit fields; a port over 0xffff reads as 0 with the note. */
    uint32_t smi_cmd;           /* as in the table (a port when <= 0xffff) */
    uint8_t acpi_enable, acpi_disable;
    uint16_t pm1a_cnt_port, pm1b_cnt_port;   /* 0: none */
    uint8_t pm1_cnt_len;
    const char *pm1_cnt_note;   /* why a control block's address was not used, or NULL */
};

struct acpi_info {
    struct acpi_rsdp_info rsdp;
    bool xsdt_used;
    const char *root_note;      /* why the XSDT was not used (revision >= 2), or why no root
                                   table is usable; NULL otherwise */
    struct acpi_table tables[ACPI_MAX_TABLES];
    unsigned n_tables, tables_dropped;
    struct acpi_madt madt;
    struct acpi_hpet_info hpet;
    struct acpi_fadt_info fadt;
    struct acpi_dmar_info dmar;
    struct acpi_spcr_info spcr;     /* the firmware's console port (spcr.h) */
    struct acpi_mcfg_info mcfg;     /* PCI's ECAM windows (mcfg.h) */
};

/* Finds the RSDP (the loader's copy when rsdp_copy_len > 0, else the EBDA's first KiB, else
 * 0xE0000..0xFFFFF), walks the root table and decodes MADT, HPET, FADT and DMAR into *out. Never
 * fails: what is missing or broken is described in *out. Reads only through mem. */
void acpi_parse(const struct acpi_mem *mem, const void *rsdp_copy, size_t rsdp_copy_len,
                struct acpi_info *out);

/* The HPET's COUNTER_CLK_PERIOD (capabilities bits 32..63) is plausible: 100000 fs
 * (10 GHz) .. 100000000 fs (10 MHz, the HPET spec's maximum). When not, *reason (if given)
 * says which bound failed. */
#define ACPI_HPET_PERIOD_MIN_FS 100000u
#define ACPI_HPET_PERIOD_MAX_FS 100000000u
bool acpi_hpet_period_ok(uint32_t period_fs, const char **reason);

/* Names for the records: "conforms", "high", "low", "reserved"; "conforms", "edge", "level",
 * "reserved"; "source", "lapic", "x2apic". */
const char *acpi_polarity_name(enum acpi_polarity p);
const char *acpi_trigger_name(enum acpi_trigger t);
const char *acpi_nmi_kind_name(enum acpi_nmi_kind k);

#endif
