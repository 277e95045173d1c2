package dev.hccl.transport.netty;

import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.TlsMaterial;
import dev.hccl.api.testing.RecordingInbound;
import io.netty.handler.ssl.SslHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Mutual TLS on the TCP transport: every connection carries the TLS handler first and messages arrive intact; a peer
 * without TLS, or with a certificate another CA signed, never connects.
 */
class NettyTlsTest
{
    @TempDir
    static Path dir;

    private final Cluster cluster = new Cluster();
    private final RecordingInbound[] in = new RecordingInbound[2];

    @BeforeAll
    static void makeCertificates() throws Exception
    {
        // tools/tls-certs.sh, from the module's directory, where the tests run.
        final Process p = new ProcessBuilder("bash", Path.of("..", "tools", "tls-certs.sh").toString(),
            dir.toString()).redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "tools/tls-certs.sh:\n" + out);
    }

    private static TlsMaterial tls(final String leaf)
    {
        return TlsMaterial.load(dir.resolve(leaf + ".pem"), dir.resolve(leaf + ".key"), dir.resolve("ca.pem"));
    }

    @AfterEach
    void close()
    {
        cluster.close();
    }

    @Test
    void everyConnectionIsEncryptedAndMessagesArriveIntact() throws Exception
    {
        final NettyTransport[] t = cluster.connected(in, ctx -> ctx.tls(tls("rank")));
        for (int i = 0; i < Cluster.CONNECTIONS; i++)
        {
            assertNotNull(t[1].mesh().link(0).connection(i).channel().pipeline().get(SslHandler.class));
            assertNotNull(t[0].mesh().link(1).connection(i).channel().pipeline().get(SslHandler.class));
        }
        final byte[] bytes = new byte[3 << 20];
        new java.util.Random(7).nextBytes(bytes);
        Cluster.awaitOk(Cluster.send(t[0], 1, 1, 1, new OpDescriptor(Operation.ALL_REDUCE, DataType.UINT8,
            ReduceOp.SUM, OpDescriptor.NO_ROOT, bytes.length),
            ByteBuffer.allocateDirect(bytes.length).put(bytes).flip()));
        assertArrayEquals(bytes, in[1].nextMessage().data());
    }

    @Test
    void aPeerWithoutTlsOrWithAnotherCasCertificateNeverConnects() throws Exception
    {
        for (final TlsMaterial other : new TlsMaterial[]{null, tls("rogue")})
        {
            final Cluster c = new Cluster();
            try
            {
                final Throwable failure = Cluster.failureOf(c.submit(() ->
                {
                    try
                    {
                        c.connected(new RecordingInbound[2], ctx -> (ctx.rank() == 0 ? ctx.tls(tls("rank")) :
                            ctx.tls(other)).connectTimeout(Duration.ofSeconds(3)));
                    }
                    catch (final Exception ex)
                    {
                        throw new RuntimeException(ex);
                    }
                }));
                assertNotNull(failure, "a peer " + (other == null ? "without TLS" : "of another CA") + " connected");
            }
            finally
            {
                c.close();
            }
        }
    }
}
