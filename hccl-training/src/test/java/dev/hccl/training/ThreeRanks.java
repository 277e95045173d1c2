package dev.hccl.training;

import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.util.List;

/** A test over three ranks as threads of this JVM (the in-JVM transport), opened afresh for each test. */
abstract class ThreeRanks
{
    static final int RANKS = 3;

    List<Communicator> comms;

    @BeforeEach
    void open()
    {
        comms = Hccl.initAll(RANKS);
    }

    @AfterEach
    void close()
    {
        comms.forEach(Communicator::close);
    }
}
