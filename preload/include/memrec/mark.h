/* memrec_mark(): name an instant of a program's run in its memrec dump.
 *
 * libmemrec.so exports it; a program must still run without memrec, so it
 * looks the function up at run time instead of linking to it:
 *
 *   #include <dlfcn.h>
 *   #include <memrec/mark.h>
 *
 *   memrec_mark_fn mark = (memrec_mark_fn)dlsym(RTLD_DEFAULT, MEMREC_MARK_SYMBOL);
 *   if (mark != NULL) mark("warmup-done");
 *
 * (link with -ldl on glibc before 2.34). dlsym returns NULL when the program
 * runs without memrec, and the call is skipped.
 *
 * The marker is an event of the calling thread: in the dump it comes after
 * every allocation the thread made before the call and before every one it
 * makes after, so `memrec report --from mark:warmup-done` starts exactly
 * there. Labels longer than MEMREC_MARK_MAX_LABEL bytes are cut (at a UTF-8
 * character boundary); NULL is the empty label. Markers are recorded while
 * the recording is paused too. The call never allocates, never blocks for
 * longer than a full buffer takes to drain, and is safe from any thread; a
 * call from a signal handler that interrupted memrec's own hook on that
 * thread is not recorded, and the dump counts it.
 */
#ifndef MEMREC_MARK_H
#define MEMREC_MARK_H

#ifdef __cplusplus
extern "C" {
#endif

#define MEMREC_MARK_SYMBOL "memrec_mark"
#define MEMREC_MARK_MAX_LABEL 255

void memrec_mark(const char* label);
typedef void (*memrec_mark_fn)(const char* label);

#ifdef __cplusplus
}
#endif

#endif /* MEMREC_MARK_H */
