# shellcheck shell=bash
# N processes on this host as torchrun starts them, sourced by scripts/gradsync-multiproc and by
# scripts/gradsync (run --nproc N); copied beside them into a GPU-node bundle. Needs bash 5.
#
#   gradsync_multiproc NAME N PREFIX COMMAND [ARGS...]
#     Starts COMMAND N times, each with RANK and LOCAL_RANK (0..N-1) and all with WORLD_SIZE and
#     LOCAL_WORLD_SIZE (N), MASTER_ADDR (127.0.0.1 unless set), MASTER_PORT (a free port unless
#     set) and NCCL_NVLS_ENABLE=0 (unless set) exported.
#     PREFIX all: every line of every rank's stdout and stderr is prefixed with "[rank R] ";
#            others: rank 0's output passes as is, the other ranks' lines are prefixed.
#     When a rank fails, the others get GRADSYNC_GRACE seconds (default 30) to finish (or to fail
#     by their own timeout), then SIGTERM, then SIGKILL 10 s later. SIGINT/SIGTERM/SIGHUP to the
#     shell stop every rank (background processes of a script ignore SIGINT: Ctrl-C alone would
#     leave them running). NAME starts the messages. Returns the first non-zero status of any rank
#     (in the order they ended), else 0.
#
# How it watches: each rank runs under a small subshell that reports "pid R PID" when it has
# started it and "exit R STATUS" when it has ended, on a FIFO this shell reads (with a timeout for
# the grace). Not wait -n: bash drops finished jobs from its job table when it starts others, and
# wait -n then no longer sees a rank that failed at once.

_gradsync_mp_kill() { # SIGNAL: to every rank still running
  local p
  for p in "${_gradsync_mp_alive[@]}"; do kill "-$1" "$p" 2>/dev/null; done
}

_gradsync_mp_interrupted() { # EXIT_STATUS: the shell got a signal
  trap - INT TERM HUP
  echo "$_gradsync_mp_name: interrupted; stopping every rank" >&2
  _gradsync_mp_kill TERM
  local kind r v # a rank whose start is not read yet
  while read -r -t 0.2 -u "$_gradsync_mp_status" kind r v; do
    [ "$kind" != pid ] || kill -TERM "$v" 2>/dev/null
  done
  wait "${_gradsync_mp_wrappers[@]}" 2>/dev/null
  wait "${_gradsync_mp_filters[@]}" 2>/dev/null
  exit "$1"
}

_gradsync_mp_line() { # KIND RANK VALUE: one report of a rank (gradsync_multiproc's variables)
  case "$1" in
    pid)
      _gradsync_mp_alive[$2]=$3
      started[$2]=1
      # Reported after the stop began: stopped too.
      if [ "$stage" -eq 2 ]; then kill -TERM "$3" 2>/dev/null; elif [ "$stage" -eq 3 ]; then kill -KILL "$3" 2>/dev/null; fi
      ;;
    exit)
      unset "_gradsync_mp_alive[$2]"
      ended=$((ended + 1))
      if [ "$3" -ne 0 ] && [ "$status" -eq 0 ]; then
        status=$3
        failed=$2
        if [ "$ended" -lt "$n" ]; then
          echo "$name: rank $2 exited with status $3; the others have $grace s to finish" >&2
          stage=1
          deadline=$((${EPOCHREALTIME/[.,]/} + grace * 1000000))
        else
          echo "$name: rank $2 exited with status $3" >&2
        fi
      fi
      ;;
  esac
}

gradsync_multiproc() {
  local name="$1" n="$2" prefix="$3"
  shift 3
  if [ "${BASH_VERSINFO[0]}" -lt 5 ]; then
    echo "$name: needs bash 5 or newer (this is bash $BASH_VERSION)" >&2
    return 2
  fi
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "$name: N must be a positive integer, got '$n'" >&2; return 2; }
  local grace="${GRADSYNC_GRACE:-30}"
  [[ "$grace" =~ ^[0-9]+$ ]] || { echo "$name: GRADSYNC_GRACE must be whole seconds, got '$grace'" >&2; return 2; }

  export WORLD_SIZE="$n" LOCAL_WORLD_SIZE="$n"
  export MASTER_ADDR="${MASTER_ADDR:-127.0.0.1}"
  if [ -z "${MASTER_PORT:-}" ]; then
    # A free port: ask the kernel through python3 where there is one, else pick one at random.
    MASTER_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("",0)); print(s.getsockname()[1])' 2>/dev/null \
      || echo $((20000 + RANDOM % 20000)))"
  fi
  export MASTER_PORT
  export NCCL_NVLS_ENABLE="${NCCL_NVLS_ENABLE:-0}" # NVLink multicast must stay off on shared nodes

  # The reports' FIFO, open for reading and writing (never at end of file), its name removed at once.
  local dir st
  dir="$(mktemp -d "${TMPDIR:-/tmp}/gradsync-multiproc.XXXXXX")" && mkfifo "$dir/status" && exec {st}<>"$dir/status" \
    || { echo "$name: cannot make a FIFO under ${TMPDIR:-/tmp}" >&2; rm -rf "${dir:-}"; return 1; }
  rm -rf "$dir"

  _gradsync_mp_name="$name"
  _gradsync_mp_status="$st"
  _gradsync_mp_alive=()    # rank -> pid, while it runs
  _gradsync_mp_wrappers=() # the reporting subshells
  _gradsync_mp_filters=()  # the prefixing seds, waited for so that no line comes after the return
  trap '_gradsync_mp_interrupted 130' INT
  trap '_gradsync_mp_interrupted 143' TERM
  trap '_gradsync_mp_interrupted 129' HUP

  local status=0 stage=0 deadline="" failed="" ended=0 r out err kind rr v
  local -a started=()
  for ((r = 0; r < n; r++)); do
    if [ "$prefix" = all ] || [ "$r" -gt 0 ]; then
      # Each filter gets only its own pipe: it ends when its rank does.
      exec {out}> >(exec sed -u "s/^/[rank $r] /" {st}>&-)
      _gradsync_mp_filters+=($!)
      exec {err}> >(exec sed -u "s/^/[rank $r] /" >&2 {out}>&- {st}>&-)
      _gradsync_mp_filters+=($!)
      (
        RANK=$r LOCAL_RANK=$r "$@" >&"$out" 2>&"$err" {out}>&- {err}>&- {st}>&- &
        echo "pid $r $!" >&"$st"
        exec {out}>&- {err}>&-
        wait "$!" 2>/dev/null # bash's own "Killed" line: the stop is said once, above
        echo "exit $r $?" >&"$st"
      ) &
      _gradsync_mp_wrappers+=($!)
      exec {out}>&- {err}>&-
    else
      (
        RANK=$r LOCAL_RANK=$r "$@" {st}>&- &
        echo "pid $r $!" >&"$st"
        wait "$!" 2>/dev/null
        echo "exit $r $?" >&"$st"
      ) &
      _gradsync_mp_wrappers+=($!)
    fi
    # Its pid before the next rank starts, so that a stop reaches every rank started.
    while [ -z "${started[r]:-}" ]; do
      read -r -u "$st" kind rr v && _gradsync_mp_line "$kind" "$rr" "$v"
    done
  done

  local now left_us t rc p list
  while [ "$ended" -lt "$n" ]; do
    if [ -n "$deadline" ]; then
      now=${EPOCHREALTIME/[.,]/}
      left_us=$((deadline - now))
      if [ "$left_us" -le 0 ]; then # the grace (stage 1) or the SIGTERM's 10 s (stage 2) are over
        list=""
        for p in "${!_gradsync_mp_alive[@]}"; do list="${list:+$list, }$p"; done
        if [ "$stage" -eq 1 ]; then
          echo "$name: stopping rank $list (still running $grace s after rank $failed failed)" >&2
          _gradsync_mp_kill TERM
          stage=2
          deadline=$((now + 10 * 1000000))
        else
          echo "$name: killing rank $list (still running 10 s after SIGTERM)" >&2
          _gradsync_mp_kill KILL
          stage=3
          deadline=""
        fi
        continue
      fi
      printf -v t '%d.%06d' $((left_us / 1000000)) $((left_us % 1000000))
      read -r -t "$t" -u "$st" kind rr v
    else
      read -r -u "$st" kind rr v
    fi
    rc=$?
    if [ "$rc" -eq 0 ]; then
      _gradsync_mp_line "$kind" "$rr" "$v"
    elif [ "$rc" -le 128 ]; then # not a timeout: the FIFO is gone
      echo "$name: lost the ranks' reports; stopping every rank" >&2
      _gradsync_mp_kill KILL
      [ "$status" -ne 0 ] || status=1
      break
    fi
  done
  wait "${_gradsync_mp_wrappers[@]}" 2>/dev/null
  # The filters end with their rank's last line, unless a process the rank started holds its
  # output still: then up to 5 s, and they are left to finish by themselves.
  local tries=0
  for p in "${_gradsync_mp_filters[@]}"; do
    while kill -0 "$p" 2>/dev/null && [ "$tries" -lt 50 ]; do
      read -r -t 0.1 -u "$st" kind rr v # a sleep without a process
      tries=$((tries + 1))
    done
  done
  trap - INT TERM HUP
  exec {st}<&-
  return "$status"
}
