/**
 * hccl-java's JDK Flight Recorder events ({@code jdk.jfr}, in every JDK; no dependency): one per collective, per
 * point-to-point operation, per connection made at init and per communicator failure, under the category "HCCL".
 * They cost a check of a flag when no recording runs; a recording records them as its settings say (all of them by
 * default; {@code bin/hccl.jfc} adds them to the JDK's default profile with a threshold of 0).
 * {@code jfr print --events 'dev.hccl.*' recording.jfr} and JDK Mission Control show them.
 */
package dev.hccl.core.events;
