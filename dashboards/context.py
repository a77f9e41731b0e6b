"""What every dashboard module receives: the thresholds, looked up by field-notes id."""
from __future__ import annotations

from dataclasses import dataclass, field

from dashboards.thresholds import Threshold, ThresholdError


@dataclass
class Ctx:
    thresholds: dict[str, Threshold]
    used: dict[str, Threshold] = field(default_factory=dict)

    def th(self, ident: str, variant: str | None = None) -> Threshold:
        """The threshold for a field-notes id (variant: e.g. 'read'/'write' for R17)."""
        names = [ident]
        if variant:
            names = [f"{ident}_{variant}", f"{ident}.{variant}", f"{ident}-{variant}",
                     f"{ident}/{variant}", f"{ident} {variant}"]
        for name in names:
            if name in self.thresholds:
                self.used[name] = self.thresholds[name]
                return self.thresholds[name]
        where = next(iter(self.thresholds.values())).source if self.thresholds else "thresholds"
        raise ThresholdError(f"{where}: no entry for {' or '.join(names)} (the dashboards need it)")
