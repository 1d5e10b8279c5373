-- mean_abs_step(xs): the mean |x_i - x_(i-1)| over the successive values of the list xs (NULL
-- with fewer than two): the jitter of delays listed in arrival order. flow_run_facts_from_events
-- (the whole run, stored) and flow_stats_in (a window) compute jitter with it.
-- uses:
CREATE OR REPLACE MACRO mean_abs_step(xs) AS
    list_avg(list_transform(range(2, len(xs) + 1), lambda i: abs(xs[i] - xs[i - 1])));
