/* lib/errno.h - the negative error values ticklab functions return (errno-style, Linux
 * numbering so that a reader recognises them). */
#ifndef TICKLAB_LIB_ERRNO_H
#define TICKLAB_LIB_ERRNO_H
#define EIO       5
#define E2BIG     7
#define EAGAIN    11
#define ENOMEM    12
#define ENOSPC    28
#define EBUSY     16
#define ENODEV    19
#define EINVAL    22
#define ERANGE    34
#define ENOTSUP   95
#define ETIMEDOUT 110
#define ETIME     62   /* the deadline had already passed when it was programmed */
#endif
