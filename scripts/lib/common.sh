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

# Reads ninja's output (NINJA_STATUS "[done/total] ") on stdin into the log $1 and
# shows how far the build is: one line rewritten in place on a terminal, else a
# line at every tenth, so a long first build never looks stuck.
memrec_build_progress() {
  local log=$1 line finished total="" percent tenth shown=-1 tty=0
  [[ -t 1 ]] && tty=1
  while IFS= read -r line; do
    printf '%s\n' "$line" >>"$log"
    [[ $line =~ ^\[([0-9]+)/([0-9]+)\]\  ]] || continue
    finished=${BASH_REMATCH[1]} total=${BASH_REMATCH[2]}
    percent=$((finished * 100 / total)) tenth=$((finished * 10 / total))
    if ((tty)); then
      printf '\r  building: %d of %d steps (%d %%)' "$finished" "$total" "$percent"
    elif ((tenth > shown)); then
      shown=$tenth
      echo "  building: $finished of $total steps ($percent %)"
    fi
  done
  if ((tty)) && [[ -n $total ]]; then echo; fi
}

# Configures build/ if needed and builds it: everything, or only the ninja
# targets given (scripts/demo builds what it runs first). Says beforehand how
# many steps are left and roughly how long they take, then shows progress.
# Output goes to a log; on failure the interesting part of it is printed and the
# function returns non-zero. Meson reconfigures by itself when a meson.build
# changes, so an existing build/ is only built.
memrec_build() {
  local log steps cores minutes started
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
  # About 3 s of CPU a step, measured over a whole build of this tree.
  steps=$(ninja -C "$MEMREC_BUILD" -n "$@" 2>/dev/null | grep -c '^\[' || true)
  cores=$(nproc 2>/dev/null || echo 1)
  if ((steps > 20)); then
    minutes=$(((steps * 3 / cores + 59) / 60))
    echo "  $steps build steps left: about $minutes minute(s) on $cores core(s) when nothing else runs"
  fi
  started=$SECONDS
  : >"$log"
  # Callers run with pipefail: a failed ninja fails the pipeline.
  if ! NINJA_STATUS='[%f/%t] ' ninja -C "$MEMREC_BUILD" "$@" 2>&1 | memrec_build_progress "$log"; then
    echo "build failed:"
    memrec_print_error_tail "$log"
    cp "$log" "$MEMREC_BUILD/meson-logs/scripts-build.log" 2>/dev/null &&
      echo "(full log: $MEMREC_BUILD/meson-logs/scripts-build.log)"
    rm -f "$log"
    return 1
  fi
  if ((steps > 20)); then echo "  built in $((SECONDS - started)) s"; fi
  cp "$log" "$MEMREC_BUILD/meson-logs/scripts-build.log" 2>/dev/null || true
  rm -f "$log"
}
