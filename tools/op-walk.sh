#!/usr/bin/env bash
# The operation path's walks, measured (tools/op-walk/OpWalk.java says what is counted): the classes an all-reduce
# runs from the user's call to its algorithm, and those a peer's failure runs from the transport's report to the
# user's exception, two ranks as threads, under JFR's method tracing of every class of ours but the tools'.
#
#   tools/op-walk.sh [JAR]        JAR: a build's hccl-tools.jar (default hccl-dist/target/hccl-tools.jar)
#
# Needs a JDK of 25 or later (method tracing, JEP 520): JAVA_HOME's, else the first under /usr/lib/jvm.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$(realpath "${1:-$root/hccl-dist/target/hccl-tools.jar}")"
[ -f "$jar" ] || { echo "op-walk: $jar not found; build first (README)" >&2; exit 1; }
java_home="${JAVA_HOME:-}"
if [ -z "$java_home" ] || ! grep -qs '^JAVA_VERSION="\(2[5-9]\|[3-9][0-9]\)' "$java_home/release"; then
  java_home="$(grep -ls '^JAVA_VERSION="\(2[5-9]\|[3-9][0-9]\)' /usr/lib/jvm/*/release | head -n 1 | xargs -r dirname)"
fi
[ -n "$java_home" ] || { echo "op-walk: needs a JDK of 25 or later (JAVA_HOME or /usr/lib/jvm)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Every class of ours but the tools', the benchmarks' and the examples': JFR traces the classes a filter names.
filter="$(unzip -Z1 "$jar" | grep '^dev/hccl/\(core\|algorithms\|api\|transport\)/.*\.class$' |
  grep -v 'module-info\|package-info' | sed 's/\.class$//; s#/#.#g' | paste -sd';')"
"$java_home/bin/javac" -d "$work/classes" -cp "$jar" "$root/tools/op-walk/OpWalk.java"
flags=(--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED --add-modules=jdk.incubator.vector
  --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow)
for scenario in ok fail; do
  "$java_home/bin/java" "${flags[@]}" -Xlog:disable -Xlog:all=error:stderr \
    "-XX:StartFlightRecording:method-trace=$filter,filename=$work/$scenario.jfr" \
    -cp "$jar:$work/classes" OpWalk scenario "$scenario" 2>&1 | grep -v 'incubator\|CommFailure - communicator failed' || true
  "$java_home/bin/java" -cp "$jar:$work/classes" OpWalk report "$work/$scenario.jfr" "$scenario"
done
