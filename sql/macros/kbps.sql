-- kbps(bytes, seconds): a rate in kbit/s (1 kbit = 1000 bit) of `bytes` over `seconds`:
-- bytes x 8 / 1000 / seconds. Every throughput and goodput column is computed with it.
-- uses:
CREATE OR REPLACE MACRO kbps(nbytes, seconds) AS CAST(nbytes AS DOUBLE) * 8 / 1000 / seconds;
