/* lib/hotpath.h - marking a function on an interrupt's way to its callback or through a tick
 * (docs/hot-paths.md).
 *
 * The kernel is built with frame pointers (-fno-omit-frame-pointer: a debugger's backtrace
 * through any function, and rbp in every fault report is a frame's). A function on a hot
 * path pays three instructions for it (push rbp; mov rbp, rsp; leave) on every interrupt.
 * HOT_PATH drops them for that function alone: a backtrace then skips it (its caller's frame
 * is shown), and rbp may serve it as one more register, which the functions it calls save
 * and restore like any other. Nothing in ticklab walks the frame chain, so nothing else
 * changes. Host builds (sanitizers) keep their frames: the attribute is the kernel's only. */
#ifndef TICKLAB_LIB_HOTPATH_H
#define TICKLAB_LIB_HOTPATH_H

#if defined(__GNUC__) && !defined(__clang__) && !defined(TICKLAB_HOSTED)
#define HOT_PATH __attribute__((optimize("omit-frame-pointer")))
#else
#define HOT_PATH
#endif

#endif
