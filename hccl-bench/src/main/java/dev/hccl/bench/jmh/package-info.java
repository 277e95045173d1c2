/**
 * The JMH benchmark suite: reduction kernels ({@link dev.hccl.bench.jmh.ReduceKernelBenchmark}), collectives over
 * the in-JVM transport ({@link dev.hccl.bench.jmh.CollectiveBenchmark}) and TCP frames
 * ({@link dev.hccl.bench.jmh.FrameBenchmark}). Build with {@code mvn -q -DskipTests package} and run with
 * {@code bin/hccl-jmh}; docs/BENCHMARKS.md says what each measures and how to read the scores.
 */
package dev.hccl.bench.jmh;
