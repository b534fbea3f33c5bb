/* kernel/arch/mce.c - see mce.h. */
#include "kernel/arch/mce.h"

#include "ticklab/cpuid.h"
#include "ticklab/io.h"
#include "ticklab/json.h"
#include "ticklab/kstring.h"
#include "ticklab/mca.h"
#include "kernel/arch/cr.h"
#include "kernel/arch/machine_events.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"

#define CR4_MCE (1ull << 6)
/* Errors listed in the `mce` record, at most (the record stays under its size limit). */
#define MAX_LISTED 8

static struct mca_info mca;
static struct {
    bool valid;
    uint64_t mcg_status;
    unsigned bank, uncorrected;
    struct mca_bank b;
} fatal;

static void probe(const struct cpu_info *ci)
{
    uint32_t edx = ci->max_leaf >= 1 ? cpuid(1, 0).edx : 0;
    mca_probe(edx, k_strcmp(ci->vendor, "GenuineIntel") == 0, ci->family, ci->model, &mca);
}

static void put_bank(struct json *j, unsigned i, const struct mca_bank *b)
{
    json_u64(j, "bank", i);
    json_hex(j, "status", b->status);
    if (b->status & MCI_STATUS_ADDRV)
        json_hex(j, "addr", b->addr);
    if (b->status & MCI_STATUS_MISCV)
        json_hex(j, "misc", b->misc);
    json_bool(j, "corrected", mca_corrected(b->status));
}

/* What the banks held before the run: listed in the record and cleared. */
static unsigned list_stale(struct json *j)
{
    unsigned n = 0, more = 0;
    json_arr_open(j, "found_at_boot");
    for (unsigned i = 0; i < mca.banks; i++) {
        struct mca_bank b;
        if (!mca_bank_read(i, &b))
            continue;
        if (n < MAX_LISTED) {
            json_obj_open(j, 0);
            put_bank(j, i, &b);
            json_obj_close(j);
            n++;
        } else {
            more++;
        }
        mca_bank_clear(i);
    }
    json_arr_close(j);
    if (more)
        json_u64(j, "found_at_boot_more", more);
    return n + more;
}

void mce_init(const struct cpu_info *ci, bool report)
{
    if (report)
        probe(ci);
    struct rec r;
    if (report) {
        rec_begin(&r, "mce");
        json_bool(&r.j, "present", mca.present);
        json_str(&r.j, "reason", mca.reason);
    }
    if (!mca.present) {
        if (report) {
            rec_emit(&r);
            kprintf("  mce         not used: %s\n", mca.reason);
        }
        return;
    }
    unsigned stale = 0;
    if (report) {
        json_hex(&r.j, "mcg_cap", mca.mcg_cap);
        json_u64(&r.j, "banks", mca.banks);
        json_bool(&r.j, "cmci_capable", (mca.mcg_cap & MCG_CAP_CMCI_P) != 0);
        json_bool(&r.j, "recovery_capable", (mca.mcg_cap & MCG_CAP_SER_P) != 0);
        json_bool(&r.j, "bank0_ctl_left", mca.skip_bank0_ctl);
        stale = list_stale(&r.j);
    } else {
        for (unsigned i = 0; i < mca.banks; i++)
            mca_bank_clear(i);
    }
    mca_enable(&mca);
    write_cr4(read_cr4() | CR4_MCE);
    machine_events_add_poll(mce_poll);
    if (report) {
        json_bool(&r.j, "enabled", true);
        rec_emit(&r);
        kprintf("  mce         %u bank(s), every error enabled, CR4.MCE set; %u error(s) left "
                "from before the run, cleared\n", mca.banks, stale);
    }
}

void mce_poll(void)
{
    if (!mca.present)
        return;
    struct window_counts *c = &machine_events[machine_events_cpu()];
    for (unsigned i = 0; i < mca.banks; i++) {
        struct mca_bank b;
        if (!mca_bank_read(i, &b))
            continue;
        /* An uncorrected error the CPU logged without signalling it (UCNA: no action
         * required) is counted apart; a signalled one never gets here (#MC first). */
        machine_events_note(mca_corrected(b.status) ? &c->mce_corrected
                                                    : &c->mce_uncorrected_logged);
        mca_bank_clear(i);
    }
}

bool mce_handle(struct trap_frame *tf)
{
    (void)tf;
    if (!mca.present)
        return false;
    uint64_t mcg = mca_status();
    struct window_counts *c = &machine_events[machine_events_cpu()];
    unsigned uncorrected = 0;
    for (unsigned i = 0; i < mca.banks; i++) {
        struct mca_bank b;
        if (!mca_bank_read(i, &b))
            continue;
        if (mca_corrected(b.status)) {
            machine_events_note(&c->mce_corrected);
            mca_bank_clear(i);
            continue;
        }
        if (!uncorrected++) {
            fatal.bank = i;
            fatal.b = b;
        }
    }
    if (!uncorrected && (mcg & MCG_STATUS_RIPV)) {
        mca_status_clear();
        return true;
    }
    fatal.valid = true;
    fatal.mcg_status = mcg;
    fatal.uncorrected = uncorrected;
    return false;
}

void mce_fault_members(struct json *j)
{
    if (!fatal.valid)
        return;
    json_hex(j, "mcg_status", fatal.mcg_status);
    json_bool(j, "restartable", (fatal.mcg_status & MCG_STATUS_RIPV) != 0);
    json_u64(j, "uncorrected_banks", fatal.uncorrected);
    if (fatal.uncorrected) {
        json_obj_open(j, "mce");
        put_bank(j, fatal.bank, &fatal.b);
        json_obj_close(j);
    }
}
