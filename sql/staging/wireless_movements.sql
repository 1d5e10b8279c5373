-- wireless_movements: the `M` lines of wireless traces: at `time` (s) `node` at (x, y, z)
-- starts towards (dest_x, dest_y) at speed_mps (m/s).
-- uses: raw_wireless_movements
CREATE OR REPLACE VIEW wireless_movements AS
SELECT run_id, line_no, time, node, x, y, z, dest_x, dest_y, speed_mps FROM raw_wireless_movements;
