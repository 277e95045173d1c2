/**
 * A communicator's counters ({@link dev.hccl.api.CommMetrics}) as a JMX MXBean, registered in the platform MBean
 * server while the communicator is open: {@code dev.hccl:type=Communicator,id=<id>,rank=<rank>}, for jconsole, JDK
 * Mission Control and any JMX exporter.
 */
package dev.hccl.core.jmx;
