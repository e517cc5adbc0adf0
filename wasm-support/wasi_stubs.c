/* In-module definitions of the WASI preview1 functions that Debian's wasi-libc (libc.a)
 * imports. wasi-libc calls __imported_wasi_snapshot_preview1_<name>, which it declares
 * with __import_module__/__import_name__ attributes; defining the symbols here makes
 * wasm-ld resolve them locally, so the final .wasm has no "wasi_snapshot_preview1"
 * imports and wasm-bindgen's JS glue works unchanged (Node, browsers, workerd, Deno).
 * Semantics: no files, no env, no args; stdout/stderr go to a Rust hook; clocks come
 * from a Rust hook (Date.now()). Signatures must match wasi-libc's declarations exactly
 * (wasm-ld replaces mismatching ones with trapping stubs and only warns). */
#include <stdint.h>
#include <stddef.h>

#define WASI_ESUCCESS 0
#define WASI_EBADF 8
#define WASI_ENOSYS 52
#define WASI_ESPIPE 70
#define WASI_ENOTCAPABLE 76

/* implemented in Rust (src/wasm/wasi_shim.rs) */
extern void runvil_host_write(int32_t fd, const uint8_t *ptr, size_t len);
extern uint64_t runvil_host_now_ns(void);

#define STUB __attribute__((used, visibility("hidden")))

typedef struct { const uint8_t *buf; size_t len; } ciovec_t;

STUB int32_t __imported_wasi_snapshot_preview1_fd_write(int32_t fd, int32_t iovs, int32_t iovs_len, int32_t nwritten) {
  if (fd != 1 && fd != 2) return WASI_EBADF;
  const ciovec_t *v = (const ciovec_t *)(uintptr_t)iovs;
  size_t total = 0;
  for (int32_t i = 0; i < iovs_len; i++) {
    if (v[i].len) runvil_host_write(fd, v[i].buf, v[i].len);
    total += v[i].len;
  }
  *(uint32_t *)(uintptr_t)nwritten = (uint32_t)total;
  return WASI_ESUCCESS;
}
STUB int32_t __imported_wasi_snapshot_preview1_fd_read(int32_t fd, int32_t iovs, int32_t iovs_len, int32_t nread) {
  (void)iovs; (void)iovs_len;
  if (fd != 0) return WASI_EBADF;
  *(uint32_t *)(uintptr_t)nread = 0; /* stdin: always EOF */
  return WASI_ESUCCESS;
}
STUB int32_t __imported_wasi_snapshot_preview1_clock_time_get(int32_t id, int64_t precision, int32_t out) {
  (void)id; (void)precision;
  *(uint64_t *)(uintptr_t)out = runvil_host_now_ns();
  return WASI_ESUCCESS;
}
STUB int32_t __imported_wasi_snapshot_preview1_environ_sizes_get(int32_t count, int32_t size) {
  *(uint32_t *)(uintptr_t)count = 0;
  *(uint32_t *)(uintptr_t)size = 0;
  return WASI_ESUCCESS;
}
STUB int32_t __imported_wasi_snapshot_preview1_environ_get(int32_t environ, int32_t buf) {
  (void)environ; (void)buf;
  return WASI_ESUCCESS;
}
STUB int32_t __imported_wasi_snapshot_preview1_fd_close(int32_t fd) { (void)fd; return WASI_EBADF; }
/* fds 0-2 look like a tty (character device, not seekable) so that musl's stdio makes
   stdout line-buffered: io.write("...\n") is flushed at the newline, like on a terminal. */
STUB int32_t __imported_wasi_snapshot_preview1_fd_fdstat_get(int32_t fd, int32_t out) {
  if (fd < 0 || fd > 2) return WASI_EBADF;
  uint8_t *p = (uint8_t *)(uintptr_t)out;          /* __wasi_fdstat_t, 24 bytes */
  for (int i = 0; i < 24; i++) p[i] = 0;
  p[0] = 2;                                        /* fs_filetype = CHARACTER_DEVICE */
  *(uint64_t *)(p + 8) = fd == 0 ? 2 : 64;         /* rights: FD_READ / FD_WRITE */
  return WASI_ESUCCESS;
}
STUB int32_t __imported_wasi_snapshot_preview1_fd_fdstat_set_flags(int32_t fd, int32_t flags) { (void)fd; (void)flags; return WASI_EBADF; }
/* EBADF ends wasi-libc's preopen scan: "no preopened directories" */
STUB int32_t __imported_wasi_snapshot_preview1_fd_prestat_get(int32_t fd, int32_t out) { (void)fd; (void)out; return WASI_EBADF; }
STUB int32_t __imported_wasi_snapshot_preview1_fd_prestat_dir_name(int32_t fd, int32_t path, int32_t len) { (void)fd; (void)path; (void)len; return WASI_EBADF; }
STUB int32_t __imported_wasi_snapshot_preview1_fd_renumber(int32_t fd, int32_t to) { (void)fd; (void)to; return WASI_EBADF; }
STUB int32_t __imported_wasi_snapshot_preview1_fd_seek(int32_t fd, int64_t off, int32_t whence, int32_t out) { (void)fd; (void)off; (void)whence; (void)out; return WASI_ESPIPE; }
STUB int32_t __imported_wasi_snapshot_preview1_path_open(int32_t fd, int32_t dirflags, int32_t path, int32_t path_len, int32_t oflags, int64_t rights_base, int64_t rights_inh, int32_t fdflags, int32_t out) {
  (void)fd; (void)dirflags; (void)path; (void)path_len; (void)oflags; (void)rights_base; (void)rights_inh; (void)fdflags; (void)out;
  return WASI_ENOTCAPABLE;
}
STUB int32_t __imported_wasi_snapshot_preview1_path_remove_directory(int32_t fd, int32_t path, int32_t len) { (void)fd; (void)path; (void)len; return WASI_ENOTCAPABLE; }
STUB int32_t __imported_wasi_snapshot_preview1_path_rename(int32_t fd, int32_t old, int32_t old_len, int32_t nfd, int32_t nw, int32_t nw_len) { (void)fd; (void)old; (void)old_len; (void)nfd; (void)nw; (void)nw_len; return WASI_ENOTCAPABLE; }
STUB int32_t __imported_wasi_snapshot_preview1_path_unlink_file(int32_t fd, int32_t path, int32_t len) { (void)fd; (void)path; (void)len; return WASI_ENOTCAPABLE; }
/* os.exit(): cannot return; trap. (Better: remove os.exit from the Lua environment.) */
STUB _Noreturn void __imported_wasi_snapshot_preview1_proc_exit(int32_t code) { (void)code; __builtin_trap(); }
