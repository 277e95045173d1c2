package dev.hccl.transport.netty;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.TlsMaterial;
import io.netty.channel.Channel;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLException;

/**
 * Mutual TLS on the TCP transport's connections, or none: Netty's contexts as acceptor and as dialer, BoringSSL
 * through netty-tcnative where it loads, the JDK's engine otherwise. Every connection presents this rank's
 * certificate and requires the peer's, signed by the CA; host names are not checked, as ranks reach each other by
 * address.
 */
final class TcpTls
{
    /** The TLS handler's name, first in the pipeline when TLS is on. */
    static final String TLS_HANDLER = "tls";

    private static final Logger LOG = LoggerFactory.getLogger(TcpTls.class);

    /** This side's context as acceptor and as dialer; null for plain TCP. */
    private final SslContext acceptor;
    private final SslContext dialer;

    private TcpTls(final SslContext acceptor, final SslContext dialer)
    {
        this.acceptor = acceptor;
        this.dialer = dialer;
    }

    /**
     * Builds the contexts.
     *
     * @param rank this rank, for the log.
     * @param tls  the certificates, or null for plain TCP.
     * @return the contexts, or none.
     * @throws HcclException E_ENV when the certificates cannot make a context.
     */
    static TcpTls of(final int rank, final TlsMaterial tls)
    {
        if (null == tls)
        {
            return new TcpTls(null, null);
        }
        final SslProvider provider = OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
        try
        {
            final SslContext acceptor = SslContextBuilder.forServer(tls.keyManagers()).trustManager(tls.trustManagers())
                .clientAuth(ClientAuth.REQUIRE).sslProvider(provider).build();
            final SslContext dialer = SslContextBuilder.forClient().keyManager(tls.keyManagers())
                .trustManager(tls.trustManagers()).endpointIdentificationAlgorithm(null).sslProvider(provider).build();
            LOG.debug("rank {}: mutual TLS on every TCP connection with {} ({})", rank,
                provider == SslProvider.OPENSSL ? "BoringSSL (netty-tcnative)" : "the JDK's engine", tls);
            return new TcpTls(acceptor, dialer);
        }
        catch (final SSLException ex)
        {
            throw new HcclException(ErrorCode.E_ENV, "cannot set up TLS with " + tls + ": " + ex.getMessage(), ex);
        }
    }

    /**
     * Puts the acceptor's TLS first in an accepted channel's pipeline, when it is on.
     *
     * @param ch the channel.
     */
    void addAcceptor(final Channel ch)
    {
        add(ch, acceptor);
    }

    /**
     * Puts the dialer's TLS first in a dialed channel's pipeline, when it is on.
     *
     * @param ch the channel.
     */
    void addDialer(final Channel ch)
    {
        add(ch, dialer);
    }

    private static void add(final Channel ch, final SslContext context)
    {
        if (null != context)
        {
            ch.pipeline().addLast(TLS_HANDLER, context.newHandler(ch.alloc()));
        }
    }
}
