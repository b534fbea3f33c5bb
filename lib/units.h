/* lib/units.h - the time units, named once. */
#ifndef TICKLAB_LIB_UNITS_H
#define TICKLAB_LIB_UNITS_H

#define NSEC_PER_SEC  1000000000ull
#define NSEC_PER_MSEC 1000000ull
#define NSEC_PER_USEC 1000ull

#endif
