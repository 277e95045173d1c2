/**
 * The shared-memory transport of hccl-java, between the ranks of one node.
 * <p>
 * {@link dev.hccl.transport.shm.ShmTransportProvider} opens a
 * {@link dev.hccl.transport.shm.ShmTransport} on {@code HCCL_SHM_DIR}. Each connected pair of ranks shares one
 * segment with two Agrona single-producer single-consumer rings, one each way; the segment's file is unlinked as soon
 * as both ranks have mapped it. Sends copy straight from the caller's buffer into the ring; the receiver hands the
 * communicator views of the shared memory itself. The threads that wait for transfers drive the transport; a watch
 * thread per transport writes heartbeats, notices dead peers, and drives while no caller does.
 */
package dev.hccl.transport.shm;
