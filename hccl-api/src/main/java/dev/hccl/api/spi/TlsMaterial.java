package dev.hccl.api.spi;

import dev.hccl.api.CommConfig;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;

/**
 * The PEM files of mutual TLS ({@code HCCL_TLS_CERT}, {@code HCCL_TLS_KEY}, {@code HCCL_TLS_CA}), loaded into the
 * JDK's key and trust managers, for the rendezvous store and for the TCP transport alike. Every rank presents its
 * certificate and accepts only peers whose certificate the CA signed; host names are not checked, since ranks reach
 * each other by address (the CA says who belongs to the job, the job token which job it is).
 */
public final class TlsMaterial
{
    private static final char[] NO_PASSWORD = new char[0];

    private final KeyManagerFactory keyManagers;
    private final TrustManagerFactory trustManagers;
    private final String description;

    private TlsMaterial(final KeyManagerFactory keyManagers, final TrustManagerFactory trustManagers,
        final String description)
    {
        this.keyManagers = keyManagers;
        this.trustManagers = trustManagers;
        this.description = description;
    }

    /**
     * The configuration's TLS files, loaded.
     *
     * @param config the configuration.
     * @return the material, or null when TLS is off (none of the three variables set).
     * @throws HcclException {@link ErrorCode#E_ENV} when only some are set, or a file cannot be read or parsed,
     *                       naming the variable and what to do.
     */
    public static TlsMaterial of(final CommConfig config)
    {
        final String cert = config.get(CommConfig.TLS_CERT);
        final String key = config.get(CommConfig.TLS_KEY);
        final String ca = config.get(CommConfig.TLS_CA);
        if (cert == null && key == null && ca == null)
        {
            return null;
        }
        if (cert == null || key == null || ca == null)
        {
            throw new HcclException(ErrorCode.E_ENV, "mutual TLS needs HCCL_TLS_CERT, HCCL_TLS_KEY and HCCL_TLS_CA " +
                "together; missing: " + (cert == null ? "HCCL_TLS_CERT " : "") + (key == null ? "HCCL_TLS_KEY " : "") +
                (ca == null ? "HCCL_TLS_CA" : "").trim());
        }
        return load(Path.of(cert), Path.of(key), Path.of(ca));
    }

    /**
     * Loads the files.
     *
     * @param certFile this rank's certificate chain, PEM.
     * @param keyFile  its private key, PEM PKCS#8 ({@code BEGIN PRIVATE KEY}), unencrypted.
     * @param caFile   the certificates of the CAs whose certificates are accepted, PEM.
     * @return the material.
     * @throws HcclException {@link ErrorCode#E_ENV} naming the file and the problem.
     */
    public static TlsMaterial load(final Path certFile, final Path keyFile, final Path caFile)
    {
        final List<Certificate> chain = certificates("HCCL_TLS_CERT", certFile);
        final List<Certificate> authorities = certificates("HCCL_TLS_CA", caFile);
        final PrivateKey key = privateKey(keyFile);
        try
        {
            final KeyStore keys = KeyStore.getInstance("PKCS12");
            keys.load(null, null);
            keys.setKeyEntry("hccl", key, NO_PASSWORD, chain.toArray(new Certificate[0]));
            final KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keys, NO_PASSWORD);
            final KeyStore trusted = KeyStore.getInstance("PKCS12");
            trusted.load(null, null);
            for (int i = 0; i < authorities.size(); i++)
            {
                trusted.setCertificateEntry("ca" + i, authorities.get(i));
            }
            final TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trusted);
            return new TlsMaterial(kmf, tmf, certFile + " (CA " + caFile + ")");
        }
        catch (final GeneralSecurityException | IOException ex)
        {
            throw new HcclException(ErrorCode.E_ENV, "HCCL_TLS_KEY " + keyFile + " does not go with HCCL_TLS_CERT " +
                certFile + ": " + ex.getMessage(), ex);
        }
    }

    /**
     * @return this rank's key and certificate.
     */
    public KeyManagerFactory keyManagers()
    {
        return keyManagers;
    }

    /**
     * @return the CAs whose certificates are accepted.
     */
    public TrustManagerFactory trustManagers()
    {
        return trustManagers;
    }

    /**
     * A JDK context for plain sockets (the rendezvous store).
     *
     * @return a TLS context with these managers.
     */
    public SSLContext sslContext()
    {
        try
        {
            final SSLContext context = SSLContext.getInstance("TLS");
            context.init(keyManagers.getKeyManagers(), trustManagers.getTrustManagers(), null);
            return context;
        }
        catch (final GeneralSecurityException ex)
        {
            throw new HcclException(ErrorCode.E_ENV, "cannot make a TLS context: " + ex, ex);
        }
    }

    @Override
    public String toString()
    {
        return description;
    }

    private static List<Certificate> certificates(final String variable, final Path file)
    {
        try
        {
            final Collection<? extends Certificate> certs = CertificateFactory.getInstance("X.509")
                .generateCertificates(new ByteArrayInputStream(Files.readAllBytes(file)));
            if (certs.isEmpty())
            {
                throw new HcclException(ErrorCode.E_ENV, variable + " " + file + " holds no certificate");
            }
            return new ArrayList<>(certs);
        }
        catch (final IOException | GeneralSecurityException ex)
        {
            throw new HcclException(ErrorCode.E_ENV, variable + " " + file + ": cannot read PEM certificates: " + ex,
                ex);
        }
    }

    private static PrivateKey privateKey(final Path file)
    {
        final String pem;
        try
        {
            pem = Files.readString(file, StandardCharsets.US_ASCII);
        }
        catch (final IOException ex)
        {
            throw new HcclException(ErrorCode.E_ENV, "HCCL_TLS_KEY " + file + " cannot be read: " + ex, ex);
        }
        final String begin = "-----BEGIN PRIVATE KEY-----";
        final int from = pem.indexOf(begin);
        final int to = pem.indexOf("-----END PRIVATE KEY-----");
        if (from < 0 || to < from)
        {
            throw new HcclException(ErrorCode.E_ENV, "HCCL_TLS_KEY " + file + " is not an unencrypted PKCS#8 PEM key " +
                "(BEGIN PRIVATE KEY); convert it with: openssl pkcs8 -topk8 -nocrypt -in " + file + " -out key.pem");
        }
        final byte[] der = Base64.getMimeDecoder().decode(pem.substring(from + begin.length(), to));
        for (final String algorithm : new String[]{"RSA", "EC", "Ed25519", "Ed448"})
        {
            try
            {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            }
            catch (final GeneralSecurityException ignore)
            {
                // try the next algorithm
            }
        }
        throw new HcclException(ErrorCode.E_ENV, "HCCL_TLS_KEY " + file + ": not an RSA, EC or EdDSA key");
    }
}
