package dev.hccl.it;

/**
 * {@link FailureTest} over shared memory: mismatched collectives, counts and roots, ranks that never arrive and a rank
 * that stops issuing, between ranks of one node that exchange data through mapped segments.
 */
class ShmFailureTest extends FailureTest
{
    @Override
    boolean sharedMemory()
    {
        return true;
    }
}
