"""What libmemrec.so imports and exports: an import of the C++ runtime, of
exceptions or of a lock would let a hook allocate or deadlock, so the list is
reviewed (preload_imports.txt) and some imports are refused outright."""
import re
import subprocess
from pathlib import Path

import memrec_support as support

ALLOW_LIST = Path(__file__).with_name("preload_imports.txt")

# Refused whatever the allow-list says, with the reason.
FORBIDDEN = [
    (r"^_Z", "a C++ runtime symbol (operator new/delete, std::, typeinfo): the preload must not need libstdc++"),
    (r"^__cxa_(throw|allocate_exception|begin_catch|end_catch|rethrow|free_exception)$",
     "exceptions: the preload builds with -fno-exceptions"),
    (r"^__gxx_personality_v0$|^_Unwind_Resume$", "exception unwinding in the preload's own code"),
    (r"^__cxa_guard_(acquire|release|abort)$",
     "a function-local static with a dynamic initializer (takes a lock, may allocate)"),
    (r"^__cxa_thread_atexit(_impl)?$", "a thread_local with a destructor: registering it allocates"),
    (r"^pthread_mutex_(lock|trylock|timedlock|clocklock)$", "a mutex: a hook must never block on a lock"),
    (r"^pthread_rwlock_", "a lock: a hook must never block on a lock"),
    (r"^pthread_spin_lock$", "a lock: a hook must never block on a lock"),
    (r"^mi_", "mimalloc belongs to the analyzer, never to the preload"),
    (r"^(printf|fprintf|vfprintf|dprintf|vdprintf|puts|fputs|fwrite|fopen|fdopen|perror|strdup|strndup|"
     r"asprintf|vasprintf|open_memstream)$",
     "stdio and string copies allocate or lock: report errors with write(2) from a fixed buffer"),
]

# The functions the preload exists to interpose.
REQUIRED_EXPORTS = {
    "malloc", "free", "calloc", "realloc", "reallocarray", "memalign", "aligned_alloc",
    "posix_memalign", "valloc", "pvalloc", "mmap", "munmap", "mremap",
}
# operator new and delete in every form (preload/cxx_hooks.cpp): the only C++
# names it exports, so that a program whose allocator replaces libstdc++'s
# operators (mimalloc, tcmalloc) still has its C++ allocations recorded.
CXX_OPERATORS = {
    "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
    "_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm",
    "_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t", "_ZdlPvmSt11align_val_t", "_ZdaPvmSt11align_val_t",
    "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t", "_ZdaPvSt11align_val_tRKSt9nothrow_t",
}


def dynamic_symbols(library: Path, which: str) -> set[str]:
    out = subprocess.run(["nm", "-D", which, str(library)], capture_output=True, text=True,
                         timeout=support.TIMEOUT_S, check=True).stdout
    names = set()
    for line in out.splitlines():
        fields = line.split()
        if not fields:
            continue
        name = fields[-1]
        names.add(re.split(r"@", name, maxsplit=1)[0])
    return names


def allow_list() -> set[str]:
    names = set()
    for line in ALLOW_LIST.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.add(line)
    return names


def test_preload_imports_no_forbidden_symbol(preload):
    # given the built preload
    # when its undefined dynamic symbols are listed
    imports = dynamic_symbols(preload, "--undefined-only")
    # then none of them is refused outright
    refused = sorted(f"{name}: {reason}" for name in imports for pattern, reason in FORBIDDEN
                     if re.search(pattern, name))
    assert refused == [], "\n".join(refused)


def test_preload_imports_only_reviewed_symbols(preload):
    # given the built preload and the reviewed allow-list
    imports = dynamic_symbols(preload, "--undefined-only")
    allowed = allow_list()
    # then every import is on the list (weak loader hooks such as
    # __cxa_finalize, _ITM_* and __gmon_start__ come with every shared object)
    implicit = {"__cxa_finalize", "_ITM_registerTMCloneTable", "_ITM_deregisterTMCloneTable", "__gmon_start__"}
    unreviewed = sorted(imports - allowed - implicit)
    assert unreviewed == [], (
        f"imports missing from {ALLOW_LIST.name} (review each, then add it):\n  " + "\n  ".join(unreviewed)
        + "\nall current imports:\n  " + "\n  ".join(sorted(imports)))


def test_preload_does_not_need_the_cpp_runtime(preload):
    # given the built preload
    # when its DT_NEEDED entries are read
    out = subprocess.run(["readelf", "-d", "-W", str(preload)], capture_output=True, text=True,
                         timeout=support.TIMEOUT_S, check=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
    # then libstdc++ is not among them: loading it into a C program would
    # change that program (its emergency pool alone is a 73 KiB allocation)
    assert needed, out
    assert not [n for n in needed if n.startswith("libstdc++")], needed


def test_preload_exports_the_interposed_functions_and_no_other_cpp_symbol(preload):
    # given the built preload
    exports = dynamic_symbols(preload, "--defined-only")
    # then it exports every function it interposes
    assert REQUIRED_EXPORTS | CXX_OPERATORS <= exports, sorted(REQUIRED_EXPORTS | CXX_OPERATORS - exports)
    # and nothing else of C++: not its insides (the version script ends in `local: *`)
    assert sorted(name for name in exports if name.startswith("_Z")) == sorted(CXX_OPERATORS)
