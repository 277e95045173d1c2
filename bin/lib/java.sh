# Sourced by the bin/ scripts (not run): picks the java binary and the JVM flags hccl-java needs on its version.
#
# Sets HCCL_JAVA (JAVA_HOME's java when JAVA_HOME is set, else java from PATH), HCCL_JAVA_FEATURE (its feature
# version: 17, 21, 25, ...), the array HCCL_JVM_FLAGS and the array HCCL_JVM_BASE_FLAGS, the same without the
# incubator modules, for the tools that reduce nothing (the JVM prints "WARNING: Using incubator modules" whenever one
# is added, and no flag turns that off). HCCL_JVM_FLAGS:
#   --add-opens=java.base/jdk.internal.misc=ALL-UNNAMED  every JDK: Agrona reaches jdk.internal.misc.Unsafe
#   --add-modules=jdk.incubator.vector                   every JDK: the Vector API for the fast reduction kernels
#                                                        (the JVM then prints "WARNING: Using incubator modules")
#   --enable-native-access=ALL-UNNAMED                   every JDK (17 has the option): from JDK 24 on, without it
#                                                        the JVM warns when Netty loads its epoll library
#   --sun-misc-unsafe-memory-access=allow                JDK 24+ only (23 has it, 17 to 22 refuse it): JDK 24
#                                                        warns when Netty uses sun.misc.Unsafe, and Netty 4.2 on
#                                                        JDK 25+ leaves Unsafe off unless this is set
#   --add-modules=jdk.incubator.foreign                  JDK 17 only (other JDKs lack the module and would not
#                                                        start): its foreign linker binds the C library's memmove
#                                                        for copies into shared memory, as JDK 22+'s final API does
#                                                        (the JVM's incubator warning then names both modules)
# The version comes from the JDK's release file, found through JAVA_HOME or by following java's symlinks, and only
# where there is none from `java -version`, which starts a JVM.

hccl_java_release_version() {
  local java_bin="$1" dir link
  if [ -n "${JAVA_HOME:-}" ] && [ -f "$JAVA_HOME/release" ]; then
    sed -n 's/^JAVA_VERSION="\([^"]*\)".*/\1/p' "$JAVA_HOME/release"
    return
  fi
  java_bin="$(command -v "$java_bin" || true)"
  [ -n "$java_bin" ] || return 0
  # readlink -f is not available everywhere (older macOS): follow the links by hand.
  while [ -L "$java_bin" ]; do
    dir="$(cd -P "$(dirname "$java_bin")" && pwd)"
    link="$(readlink "$java_bin")"
    if [[ $link != /* ]]; then link="$dir/$link"; fi
    java_bin="$link"
  done
  dir="$(cd -P "$(dirname "$java_bin")/.." && pwd)"
  if [ -f "$dir/release" ]; then
    sed -n 's/^JAVA_VERSION="\([^"]*\)".*/\1/p' "$dir/release"
  fi
}

if [ -n "${JAVA_HOME:-}" ]; then
  HCCL_JAVA="$JAVA_HOME/bin/java"
else
  HCCL_JAVA=java
fi

hccl_version="$(hccl_java_release_version "$HCCL_JAVA")"
if [ -z "$hccl_version" ]; then
  # The quoted version of the first line: 'openjdk version "25.0.1" 2025-10-21'.
  hccl_version="$("$HCCL_JAVA" -version 2>&1 | sed -n 's/^[^"]* version "\([^"]*\)".*/\1/p' | head -n 1 || true)"
fi
hccl_version="${hccl_version#1.}"
HCCL_JAVA_FEATURE="${hccl_version%%[!0-9]*}"
hccl_version_known=1
if [ -z "$HCCL_JAVA_FEATURE" ]; then
  echo "$(basename "$0"): cannot tell the version of $HCCL_JAVA; assuming 17" >&2
  HCCL_JAVA_FEATURE=17
  hccl_version_known=
fi
unset hccl_version

HCCL_JVM_FLAGS=(
  --add-opens=java.base/jdk.internal.misc=ALL-UNNAMED
  --add-modules=jdk.incubator.vector
  --enable-native-access=ALL-UNNAMED
)
if [ "$HCCL_JAVA_FEATURE" -ge 24 ]; then
  HCCL_JVM_FLAGS+=(--sun-misc-unsafe-memory-access=allow)
fi
# Only where the version is known: a JDK without the module refuses to start.
if [ "$HCCL_JAVA_FEATURE" -eq 17 ] && [ -n "$hccl_version_known" ]; then
  HCCL_JVM_FLAGS+=(--add-modules=jdk.incubator.foreign)
fi
HCCL_JVM_BASE_FLAGS=()
for hccl_flag in "${HCCL_JVM_FLAGS[@]}"; do
  if [[ $hccl_flag != --add-modules=jdk.incubator.* ]]; then
    HCCL_JVM_BASE_FLAGS+=("$hccl_flag")
  fi
done
unset hccl_flag hccl_version_known

# bin/hcclrun gives every rank these flags in JDK_JAVA_OPTIONS too, for ranks that start java themselves, and names
# what it appended there in HCCL_JDK_JAVA_OPTIONS_ADDED. The scripts that source this file give the flags on the
# command line, so the appended part comes off again: the JVM then prints no "NOTE: Picked up JDK_JAVA_OPTIONS" (it
# does whenever that variable is set), and a tool run with HCCL_JVM_BASE_FLAGS gets no Vector API module from there.
# A value that no longer ends with the appended part (changed since) is left as it is.
if [ -n "${HCCL_JDK_JAVA_OPTIONS_ADDED:-}" ] && [[ ${JDK_JAVA_OPTIONS:-} == *"$HCCL_JDK_JAVA_OPTIONS_ADDED" ]]; then
  JDK_JAVA_OPTIONS="${JDK_JAVA_OPTIONS%"$HCCL_JDK_JAVA_OPTIONS_ADDED"}"
  if [ -z "${JDK_JAVA_OPTIONS//[[:space:]]/}" ]; then
    unset JDK_JAVA_OPTIONS
  fi
fi
unset HCCL_JDK_JAVA_OPTIONS_ADDED
