package dev.hccl.api.spi;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The key every connection of a job proves it knows: HMAC-SHA256 keyed with SHA-256 of the job token, so the token
 * itself never crosses the wire. A challenge pairs it with fresh nonces from both sides, so a recorded proof is worth
 * nothing in another connection. Thread-safe.
 */
public final class JobKey
{
    /** Bytes of a nonce. */
    public static final int NONCE_BYTES = 16;
    /** Bytes of a proof. */
    public static final int PROOF_BYTES = 32;

    private static final String MAC_ALGORITHM = "HmacSHA256";
    private static final SecureRandom RANDOM = new SecureRandom();

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
        try
        {
            // Hashing first gives a fixed-length, never-empty key (an empty token would be an invalid HMAC key).
            final byte[] digest =
                MessageDigest.getInstance("SHA-256").digest(jobToken.getBytes(StandardCharsets.UTF_8));
            return new JobKey(new SecretKeySpec(digest, MAC_ALGORITHM), jobToken.isEmpty());
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
