# shellcheck shell=sh
# One search for a Java 25+, sourced by scripts/gradsync, ./mvnw, scripts/make-gpu-bundle and .ci/run
# (and copied beside the launcher into a GPU-node bundle). POSIX sh: mvnw runs it under /bin/sh with
# set -euf; every name it sets starts with gradsync_ or _gj_.
#
#   gradsync_find_java [--jdk] [CANDIDATE...]
#       Prints the first java binary (symlinks resolved) of Java 25 or newer among: $GRADSYNC_JAVA,
#       the CANDIDATEs, $JAVA_HOME/bin/java, the JDK homes in GRADSYNC_JDK_SEARCH, java on the PATH.
#       With --jdk only one with javac beside it (a JDK, not a runtime). Status 1 when there is none.
#   gradsync_java_seen [--jdk]
#       What the user would think is their Java, for an error message:
#       "/usr/bin/java is Java 17, JAVA_HOME=/x has no bin/java", or "no java".
#   gradsync_use_jdk NAME
#       Keeps JAVA_HOME when it is a JDK 25+, else exports JAVA_HOME as the JDK gradsync_find_java
#       --jdk finds (saying so on stderr when it replaces one that was set); when there is none, one
#       line on stderr, "NAME: gradsync needs a JDK 25 (found: ...); install ...", and status 1.
#
# GRADSYNC_JDK_SEARCH: the JDK homes searched, as globs separated by spaces; default below. Set it
# empty to search none of them (how scripts/test-launcher simulates a machine without a JDK 25).

gradsync_jdk_search_default='/usr/lib/jvm/temurin-25* /usr/lib/jvm/java-25* /usr/lib/jvm/jdk-25* /opt/java/openjdk'

gradsync_java_version() { # JAVA: prints its feature version (17, 25), or nothing
  "$1" -XshowSettings:properties -version 2>&1 </dev/null \
    | sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p' | head -n 1 || :
}

_gj_ok() { # JAVA [jdk]: prints JAVA, symlinks resolved, when it is Java 25+ (with javac beside it for jdk)
  [ -n "$1" ] && [ -f "$1" ] && [ -x "$1" ] || return 1
  _gj_bin=$1
  _gj_real=$(readlink -f "$1" 2>/dev/null) || _gj_real=
  [ -z "$_gj_real" ] || _gj_bin=$_gj_real
  if [ "${2-}" = jdk ] && [ ! -x "${_gj_bin%/*}/javac" ]; then return 1; fi
  _gj_v=$(gradsync_java_version "$_gj_bin")
  case $_gj_v in '' | *[!0-9]*) return 1 ;; esac
  [ "$_gj_v" -ge 25 ] || return 1
  printf '%s\n' "$_gj_bin"
}

gradsync_find_java() {
  _gj_kind=
  if [ "${1-}" = --jdk ]; then _gj_kind=jdk; shift; fi
  _gj_ok "${GRADSYNC_JAVA-}" "$_gj_kind" && return 0
  for _gj_c in "$@"; do
    _gj_ok "$_gj_c" "$_gj_kind" && return 0
  done
  if [ -n "${JAVA_HOME-}" ]; then _gj_ok "$JAVA_HOME/bin/java" "$_gj_kind" && return 0; fi
  # The homes are globs: expand them even under set -f (mvnw), and put set -f back.
  case $- in *f*) _gj_noglob=1; set +f ;; *) _gj_noglob= ;; esac
  _gj_hit=
  for _gj_h in ${GRADSYNC_JDK_SEARCH-$gradsync_jdk_search_default}; do
    if _gj_ok "$_gj_h/bin/java" "$_gj_kind"; then _gj_hit=1; break; fi
  done
  if [ -n "$_gj_noglob" ]; then set -f; fi
  [ -z "$_gj_hit" ] || return 0
  _gj_c=$(command -v java 2>/dev/null) || _gj_c=
  _gj_ok "$_gj_c" "$_gj_kind" && return 0
  return 1
}

gradsync_java_seen() {
  _gj_seen=
  _gj_path_java=$(command -v java 2>/dev/null) || _gj_path_java=
  if [ -n "${JAVA_HOME-}" ] && [ ! -x "$JAVA_HOME/bin/java" ]; then _gj_seen="JAVA_HOME=$JAVA_HOME has no bin/java"; fi
  for _gj_c in "${GRADSYNC_JAVA-}" "${JAVA_HOME:+$JAVA_HOME/bin/java}" "$_gj_path_java"; do
    [ -n "$_gj_c" ] && [ -x "$_gj_c" ] || continue
    case ", $_gj_seen," in *", $_gj_c is "*) continue ;; esac # named twice (GRADSYNC_JAVA is PATH's)
    _gj_v=$(gradsync_java_version "$_gj_c")
    _gj_d="$_gj_c is Java ${_gj_v:-of unknown version}"
    if [ "${1-}" = --jdk ] && [ -n "$_gj_v" ] && [ "$_gj_v" -ge 25 ] 2>/dev/null; then
      _gj_real=$(readlink -f "$_gj_c" 2>/dev/null) || _gj_real=$_gj_c
      [ -x "${_gj_real%/*}/javac" ] || _gj_d="$_gj_d without javac (a runtime, not a JDK)"
    fi
    _gj_seen="${_gj_seen:+$_gj_seen, }$_gj_d"
  done
  printf '%s\n' "${_gj_seen:-no java}"
}

gradsync_use_jdk() {
  if [ -n "${JAVA_HOME-}" ] && _gj_ok "$JAVA_HOME/bin/java" jdk >/dev/null; then return 0; fi
  if _gj_java=$(gradsync_find_java --jdk); then
    _gj_home=${_gj_java%/*}
    _gj_home=${_gj_home%/*}
    if [ -n "${JAVA_HOME-}" ]; then
      echo "$1: JAVA_HOME=$JAVA_HOME is not a JDK 25; using $_gj_home" >&2
    fi
    JAVA_HOME=$_gj_home
    export JAVA_HOME
    return 0
  fi
  echo "$1: gradsync needs a JDK 25 (found: $(gradsync_java_seen --jdk)); install Temurin 25 (apt-get install temurin-25-jdk) or set JAVA_HOME" >&2
  return 1
}
