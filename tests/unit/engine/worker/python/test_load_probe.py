"""load_probe: the trusted echo process the timing cross-check measures the machine's load with."""

import unittest

from hiera_runner import load_probe


class LoadProbeTest(unittest.TestCase):
    def test_a_round_trip_is_a_positive_time_in_ms(self):
        t = load_probe.round_trip_ms()
        self.assertIsNotNone(t)
        self.assertGreater(t, 0.0)
        self.assertLess(t, 5000.0)

    def test_one_process_serves_every_call_and_a_dead_one_is_replaced(self):
        first = load_probe.probe()
        self.assertIs(load_probe.probe(), first)
        first.proc.kill()
        first.proc.wait()
        self.assertFalse(first.alive())
        second = load_probe.probe()
        self.assertIsNot(second, first)
        self.assertTrue(second.alive())
        self.assertIsNotNone(load_probe.round_trip_ms())

    def test_a_probe_whose_process_ended_fails_as_os_error(self):
        p = load_probe.LoadProbe()
        p.proc.kill()
        p.proc.wait()
        with self.assertRaises(OSError):
            p.round_trip_ms()
        p.close()


if __name__ == "__main__":
    unittest.main()
