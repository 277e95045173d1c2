#!/usr/bin/env bash
# A user's project against hccl-java's deployed artifacts alone: deploys this build (with its -sources and -javadoc
# jars and the BOM) to a file repository, then builds examples/my-training with an empty local repository, so that
# dev.hccl's artifacts can come from that file repository only (everything else from Maven Central), checks that the
# library brings no tool's dependency, and runs it on two ranks; builds examples/djl-training the same way and trains
# it an epoch on two ranks; then runs a job from the deployed tools jar alone.
# usage: tools/consumer-check.sh            (from a built checkout; CI runs it after mvn -B verify)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "consumer-check: deploying to file://$work/repo"
mvn -B -q -DskipTests -DaltDeploymentRepository="local::file://$work/repo" deploy

for module in hccl-api hccl-algorithms hccl-transport-netty hccl-transport-shm hccl-core hccl-training hccl-shaded \
    hccl-spark hccl-djl; do
  for kind in "" -sources -javadoc; do
    if ! ls "$work/repo/dev/hccl/$module/0.1.0-SNAPSHOT/$module-0.1.0-"*"$kind.jar" >/dev/null 2>&1; then
      echo "consumer-check: $module has no ${kind:-main} jar in the deployed repository" >&2
      exit 1
    fi
  done
done

cat > "$work/settings.xml" <<XML
<settings>
  <profiles>
    <profile>
      <id>hccl</id>
      <repositories>
        <repository>
          <id>hccl-deployed</id>
          <url>file://$work/repo</url>
          <snapshots><enabled>true</enabled></snapshots>
        </repository>
      </repositories>
    </profile>
  </profiles>
  <activeProfiles><activeProfile>hccl</activeProfile></activeProfiles>
</settings>
XML

cp -r examples/my-training "$work/consumer"
rm -rf "$work/consumer/target"
cd "$work/consumer"
echo "consumer-check: building examples/my-training with an empty local repository"
mvn -B -q -s "$work/settings.xml" -Dmaven.repo.local="$work/m2" package dependency:copy-dependencies \
  -DincludeScope=runtime
if [ -d "$work/m2/dev/hccl" ] && ls "$work/m2/dev/hccl"/*/0.1.0-SNAPSHOT/*.jar >/dev/null 2>&1; then
  echo "consumer-check: dev.hccl artifacts resolved: $(ls "$work/m2/dev/hccl" | tr '\n' ' ')"
fi
# The library is slim: none of the tools' dependencies (picocli, Jackson, JMH, charts) reaches a user's class path.
if ls target/dependency | grep -E -i 'picocli|jackson|jmh|jfree|commons-csv' ; then
  echo "consumer-check: the library brings a tool's dependency (above)" >&2
  exit 1
fi
# BoringSSL's native library for Linux x86-64 alone, not every platform's (its pom names them all).
natives=$(ls target/dependency | grep -E 'tcnative-boringssl-static' || true)
if [ "$(echo "$natives" | grep -c .)" -ne 1 ] || ! echo "$natives" | grep -q 'linux-x86_64'; then
  echo "consumer-check: the library brings netty-tcnative natives other than Linux x86-64's: $natives" >&2
  exit 1
fi
echo "consumer-check: running it on two ranks"
out=$("$root/bin/hcclrun" -np 2 java -cp 'target/my-training-1.0.jar:target/dependency/*' com.example.Train 2>&1)
echo "$out" | grep 'step '
echo "$out" | grep -q 'step 2: mean gradient 2.50 (expected 2.50) over 2 ranks' || {
  echo "consumer-check: the consumer did not compute right:" >&2
  echo "$out" >&2
  exit 1
}
# The DJL example (docs/guide/djl.md): built against the deployed hccl-djl, and one epoch on two ranks.
# Its DJL and libtorch jars come through the usual local repository, where hccl-djl's tests already put them, so
# that CI downloads them once; dev.hccl's come from the file repository, as above (none is in that local repository
# on CI, which runs mvn verify, not install).
cp -r "$root/examples/djl-training" "$work/djl-consumer"
rm -rf "$work/djl-consumer/target"
cd "$work/djl-consumer"
echo "consumer-check: building examples/djl-training against the deployed hccl-djl"
mvn -B -q -s "$work/settings.xml" package dependency:copy-dependencies -DincludeScope=runtime
out=$("$root/bin/hcclrun" -np 2 java -cp 'target/classes:target/dependency/*' com.example.ShapesTraining 1 2>&1)
echo "$out" | grep 'epoch 1:' || {
  echo "consumer-check: the DJL example did not train an epoch:" >&2
  echo "$out" >&2
  exit 1
}
cd "$work"
# A Spark job's dependency on hccl-spark brings the relocated library, hccl-djl's classes for DjlDistributor and
# slf4j-api, nothing that meets Spark's own (its Netty, Jackson) and no module twice: hccl-shaded's deployed pom is the
# dependency-reduced one, and hccl-djl comes without the modules that hccl-shaded holds.
mkdir -p "$work/spark-consumer"
cat > "$work/spark-consumer/pom.xml" <<XML
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>spark-consumer</artifactId>
  <version>1.0</version>
  <dependencies>
    <dependency>
      <groupId>dev.hccl</groupId>
      <artifactId>hccl-spark</artifactId>
      <version>0.1.0-SNAPSHOT</version>
    </dependency>
  </dependencies>
</project>
XML
(cd "$work/spark-consumer" && mvn -B -q -s "$work/settings.xml" -Dmaven.repo.local="$work/m2" \
  dependency:copy-dependencies -DincludeScope=runtime)
brought=$(ls "$work/spark-consumer/target/dependency" | sed -E 's/-[0-9][^-]*(-SNAPSHOT)?\.jar$//' | sort | tr '\n' ' ')
if [ "$brought" != "hccl-djl hccl-shaded hccl-spark slf4j-api " ]; then
  echo "consumer-check: hccl-spark brings more than hccl-djl, hccl-shaded and slf4j-api: $brought" >&2
  exit 1
fi
echo "consumer-check: hccl-spark brings $brought"
# The tools jar, deployed (classifier tools) and runnable without the repository: a job of two ranks from it alone.
tools=$(ls "$work/repo/dev/hccl/hccl-dist/0.1.0-SNAPSHOT/hccl-dist-0.1.0-"*"-tools.jar" | head -n 1)
cp "$tools" "$work/hccl-tools.jar"
echo "consumer-check: java -jar hccl-tools.jar run -np 2 bench ..., outside the repository"
out=$(env PATH=/usr/bin:/bin java -jar "$work/hccl-tools.jar" run -np 2 bench all_reduce -b 8 -e 1K -f 4 -n 5 -w 2 2>&1)
echo "$out" | grep -E 'Avg bus bandwidth|^\[0\] +1024 ' || true
echo "$out" | grep -q '# Avg bus bandwidth' || {
  echo "consumer-check: the tools jar did not run a job:" >&2
  echo "$out" >&2
  exit 1
}
echo "consumer-check: OK"
