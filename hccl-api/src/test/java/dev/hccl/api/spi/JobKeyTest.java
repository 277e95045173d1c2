package dev.hccl.api.spi;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The job key is stretched from the token: one who recorded a challenge pays PBKDF2's iterations for every token they
 * guess, not one SHA-256.
 */
class JobKeyTest
{
    @Test
    void aProofIsAnHmacUnderTheTokenStretchedByPbkdf2() throws Exception
    {
        final String token = "0123456789abcdef0123456789abcdef";
        final byte[] nonce = JobKey.nonce();
        final byte[] stretched = SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(new PBEKeySpec(
            token.toCharArray(), "hccl-java job key, version 1".getBytes(StandardCharsets.US_ASCII), 100_000, 256))
            .getEncoded();
        final Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(stretched, "HmacSHA256"));
        for (final byte[] piece : new byte[][] { "role".getBytes(StandardCharsets.US_ASCII), nonce })
        {
            mac.update(ByteBuffer.allocate(4).putInt(piece.length).array());
            mac.update(piece);
        }
        assertArrayEquals(mac.doFinal(), JobKey.of(token).prove("role", nonce));
        // Stretched once per process: the second key of the token is the same key.
        assertTrue(JobKey.of(token).verify(JobKey.of(token).prove("role", nonce), "role", nonce));
        assertFalse(JobKey.of(token + "x").verify(JobKey.of(token).prove("role", nonce), "role", nonce));
    }

    @Test
    void theKeyOfNoTokenIsPublic()
    {
        assertTrue(JobKey.of("").isPublic());
        assertFalse(JobKey.of("0123456789abcdef").isPublic());
        final byte[] nonce = JobKey.nonce();
        assertTrue(JobKey.of("").verify(JobKey.of("").prove("role", nonce), "role", nonce));
    }
}
