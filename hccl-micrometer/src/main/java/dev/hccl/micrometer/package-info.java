/**
 * hccl-java's metrics in Micrometer: {@link dev.hccl.micrometer.HcclMeters} binds a communicator's counters
 * ({@link dev.hccl.api.Communicator#metrics()}) to a {@code MeterRegistry}.
 */
package dev.hccl.micrometer;
