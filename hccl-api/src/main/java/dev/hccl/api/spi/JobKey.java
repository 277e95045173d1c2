package dev.hccl.api.spi;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.concurrent.ConcurrentHashMap;
import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The key every connection of a job proves it knows: HMAC-SHA256 keyed with a key stretched from the job token
 * (PBKDF2-HMAC-SHA256, {@value #STRETCH_ITERATIONS} iterations), so the token itself never crosses the wire, and one
 * who recorded a challenge pays that many HMACs for every token they guess offline, not one hash. A challenge pairs it
 * with fresh nonces from both sides, so a recorded proof is worth nothing in another connection. A process stretches
 * each token once. Thread-safe.
 */
public final class JobKey
{
    /** Bytes of a nonce. */
    public static final int NONCE_BYTES = 16;
    /** Bytes of a proof. */
    public static final int PROOF_BYTES = 32;

    /** Iterations of the key's stretching: tens of milliseconds once per process, per token guessed offline too. */
    static final int STRETCH_ITERATIONS = 100_000;

    private static final String MAC_ALGORITHM = "HmacSHA256";
    private static final String STRETCH_ALGORITHM = "PBKDF2WithHmacSHA256";
    /** The same for every job: the token is what differs, and the iterations are what a guess costs. */
    private static final byte[] STRETCH_SALT = "hccl-java job key, version 1".getBytes(StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Tokens already stretched in this process: a job uses one, a test process a few; cleared when it grows. */
    private static final ConcurrentHashMap<String, byte[]> STRETCHED = new ConcurrentHashMap<>();
    private static final int STRETCHED_MAX = 64;

    private final SecretKeySpec key;
    private final boolean open;

    private JobKey(final SecretKeySpec key, final boolean open)
    {
        this.key = key;
        this.open = open;
    }

    /**
     * @param jobToken the token every rank of the job shares; empty when the job has none (the key is then public).
     * @return its key.
     */
    public static JobKey of(final String jobToken)
    {
        // A fixed-length, never-empty key (an empty token would be an invalid HMAC key). The public key of a job
        // without a token, which anyone may prove, is not worth stretching.
        final byte[] stretched = jobToken.isEmpty() ? sha256(jobToken) : STRETCHED.get(jobToken);
        if (null != stretched)
        {
            return new JobKey(new SecretKeySpec(stretched, MAC_ALGORITHM), jobToken.isEmpty());
        }
        final byte[] made = stretch(jobToken);
        if (STRETCHED.size() >= STRETCHED_MAX)
        {
            STRETCHED.clear();
        }
        STRETCHED.put(jobToken, made);
        return new JobKey(new SecretKeySpec(made, MAC_ALGORITHM), false);
    }

    private static byte[] stretch(final String jobToken)
    {
        final PBEKeySpec spec = new PBEKeySpec(jobToken.toCharArray(), STRETCH_SALT, STRETCH_ITERATIONS, 256);
        try
        {
            return SecretKeyFactory.getInstance(STRETCH_ALGORITHM).generateSecret(spec).getEncoded();
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IllegalStateException(STRETCH_ALGORITHM + " is not available", ex);
        }
        finally
        {
            spec.clearPassword();
        }
    }

    private static byte[] sha256(final String text)
    {
        try
        {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IllegalStateException("SHA-256 is not available", ex);
        }
    }

    /**
     * Whether this is the key of a job without a token, which anyone can prove.
     *
     * @return true for the empty token's key.
     */
    public boolean isPublic()
    {
        return open;
    }

    /**
     * @return {@link #NONCE_BYTES} fresh random bytes.
     */
    public static byte[] nonce()
    {
        final byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        return nonce;
    }

    /**
     * The proof that the holder of this key says {@code parts}, in a role: the role keeps one side's proof from
     * passing as the other's.
     *
     * @param role  what the proof is for, such as {@code "store-server"}.
     * @param parts the bytes proved, in order (nonces, fields).
     * @return {@link #PROOF_BYTES} bytes.
     */
    public byte[] prove(final String role, final byte[]... parts)
    {
        try
        {
            // A Mac per call: challenges are rare and may run on several threads at once.
            final Mac mac = Mac.getInstance(MAC_ALGORITHM);
            mac.init(key);
            // Every piece length-prefixed, the role too: no two different inputs encode alike.
            update(mac, role.getBytes(StandardCharsets.US_ASCII));
            for (final byte[] part : parts)
            {
                update(mac, part);
            }
            return mac.doFinal();
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IllegalStateException(MAC_ALGORITHM + " is not available", ex);
        }
    }

    private static void update(final Mac mac, final byte[] piece)
    {
        mac.update(ByteBuffer.allocate(4).putInt(piece.length).array());
        mac.update(piece);
    }

    /**
     * Checks a proof in constant time.
     *
     * @param proof what the other side sent.
     * @param role  as for {@link #prove}.
     * @param parts as for {@link #prove}.
     * @return whether it was made with this key over these parts.
     */
    public boolean verify(final byte[] proof, final String role, final byte[]... parts)
    {
        return MessageDigest.isEqual(prove(role, parts), proof);
    }
}
