-- wireless_energy: energy readings of wireless traces run with an energy model, in joules:
-- the old format's `[energy E ei I es S et T er R]` blocks (remaining energy, and energy spent
-- idle, sleeping, transmitting, receiving), the new format's -Ne (remaining energy only) and
-- the `N -t T -n NODE -e E` lines of both formats (remaining energy only; idle_j .. rx_j NULL).
-- uses: raw_wireless_energy
CREATE OR REPLACE VIEW wireless_energy AS
SELECT run_id, line_no, time, node, energy_j, idle_j, sleep_j, tx_j, rx_j FROM raw_wireless_energy;
