/* kernel/report/recstore.c - see recstore.h. */
#include "kernel/report/recstore.h"

#include "ticklab/io.h"
#include "ticklab/kstring.h"

static uint8_t *store;
static size_t cap, used;
static uint32_t held, dropped;
static bool closing;
static const char *off_reason = "not set up";
static volatile int lock_word;
/* A record sent by a fault handler while this CPU held the lock (a fault inside the copy)
 * must not wait for ever: after this many spins the writer goes ahead, as klog's does. */
#define LOCK_SPINS (1u << 24)

void recstore_init(uint8_t *buf, size_t bytes, const char *why)
{
    store = bytes ? buf : 0;
    cap = store ? bytes : 0;
    used = held = dropped = 0;
    closing = false;
    off_reason = store ? 0 : why;
}

void recstore_add(const char *const *piece, const size_t *len, unsigned n)
{
    size_t total = 0;
    for (unsigned i = 0; i < n; i++)
        total += len[i];
    unsigned long f = irq_save();
    for (unsigned i = 0; i < LOCK_SPINS && __atomic_exchange_n(&lock_word, 1, __ATOMIC_ACQUIRE);
         i++)
        cpu_relax();
    size_t room = cap - used;
    if (!closing)
        room = room > RECSTORE_RESERVE ? room - RECSTORE_RESERVE : 0;
    if (!store || total > room) {
        dropped++;
    } else {
        for (unsigned i = 0; i < n; i++) {
            memcpy(store + used, piece[i], len[i]);
            used += len[i];
        }
        held++;
    }
    __atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE);
    irq_restore(f);
}

void recstore_closing(void)
{
    closing = true;
}

void recstore_get(struct recstore_info *out)
{
    *out = (struct recstore_info){ store, used, cap, held, dropped, off_reason };
}
