# Shared by scripts/test, scripts/format and scripts/demo (sourced, not run).
# Callers have already cd'ed to the repository root and set -euo pipefail.
# shellcheck shell=bash

readonly MEMREC_BUILD=build

# Prints, NUL-separated, the C and C++ sources that clang-format owns: files git
# tracks plus new ones it does not ignore (so a local run checks what the next
# commit will), never anything under build/ or node_modules/. Outside a git work
# tree (a docker build context, a tarball) it falls back to find.
memrec_source_files() {
  local path
  {
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
      git ls-files -z --cached --others --exclude-standard -- '*.c' '*.cc' '*.cpp' '*.h'
    else
      find . -type f \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.h' \) -printf '%P\0'
    fi
  } | while IFS= read -r -d '' path; do
    case "/$path" in
      "/$MEMREC_BUILD"/* | */node_modules/*) continue ;;
    esac
    # git still lists a tracked file that was deleted but not yet staged.
    if [[ -f "$path" ]]; then printf '%s\0' "$path"; fi
  done
}

# Prints the part of a failed build's log worth reading, without colour codes
# (meson asks the compiler for them even when the output is a file): from the
# first ninja "FAILED:" line or meson "ERROR:" (a meson.build that ninja's
# regeneration step rejected), else the end of the log.
memrec_print_error_tail() {
  local log=$1 first
  first=$(grep -n -m1 -E '^FAILED:|(^|: )ERROR: ' "$log" | cut -d: -f1 || true)
  if [[ -n "$first" ]]; then
    sed -n "${first},$((first + 119))p" "$log"
  else
    tail -n 60 "$log"
  fi | sed 's/\x1b\[[0-9;]*[mK]//g'
}

# Configures build/ if needed and builds it. Output goes to a log; on failure the
# interesting part of it is printed and the function returns non-zero. Meson
# reconfigures by itself when a meson.build changes, so an existing build/ is
# only built.
memrec_build() {
  local log
  log=$(mktemp "${TMPDIR:-/tmp}/memrec-build.XXXXXX")
  if [[ ! -f "$MEMREC_BUILD/build.ninja" ]]; then
    local setup=(meson setup "$MEMREC_BUILD")
    # A setup that died half-way leaves coredata but no build.ninja.
    [[ -f "$MEMREC_BUILD/meson-private/coredata.dat" ]] && setup=(meson setup --wipe "$MEMREC_BUILD")
    echo "${setup[*]}"
    if ! "${setup[@]}" >"$log" 2>&1; then
      echo "meson setup failed:"
      tail -n 40 "$log"
      rm -f "$log"
      return 1
    fi
  fi
  if ! ninja -C "$MEMREC_BUILD" >"$log" 2>&1; then
    echo "build failed:"
    memrec_print_error_tail "$log"
    cp "$log" "$MEMREC_BUILD/meson-logs/scripts-build.log" 2>/dev/null &&
      echo "(full log: $MEMREC_BUILD/meson-logs/scripts-build.log)"
    rm -f "$log"
    return 1
  fi
  cp "$log" "$MEMREC_BUILD/meson-logs/scripts-build.log" 2>/dev/null || true
  rm -f "$log"
}
