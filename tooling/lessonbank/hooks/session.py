"""One session's state: the lessons claimed in it (once per session, across parallel processes) and its turns.

`os` is not imported: its start-up cost is a visible share of a hook's whole run.
"""

import posix

from lessonbank.kernel import statedir


class Session:
    """One session's folder in the state folder."""

    def __init__(self, state_dir: str, session_id: str) -> None:
        self.state_dir = state_dir
        self.id = session_id or "unknown"
        self.dir = statedir.session_dir(state_dir, self.id)

    def claim_path(self, slug: str) -> str:
        return self.dir + "/" + statedir.CLAIMS + "/" + statedir.safe_name(slug)

    def claimed(self, slug: str) -> bool:
        """Was this lesson already handed over in this session?"""
        return posix.access(self.claim_path(slug), posix.F_OK)

    def claim(self, slug: str, priority: int) -> bool:
        """Atomically claim a lesson for this session; False when another process has it."""
        if statedir.READ_ONLY:
            return not self.claimed(slug)
        return self._exclusive(self.dir + "/" + statedir.CLAIMS, statedir.safe_name(slug), str(priority))

    def claim_stop(self, turn: str) -> bool:
        """Claim the one Stop block allowed per turn."""
        if statedir.READ_ONLY:
            return not posix.access(self.dir + "/" + statedir.STOPS + "/" + statedir.safe_name(turn), posix.F_OK)
        return self._exclusive(self.dir + "/" + statedir.STOPS, statedir.safe_name(turn), "")

    def _exclusive(self, folder: str, name: str, content: str) -> bool:
        path = folder + "/" + name
        flags = posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL
        try:
            fd = posix.open(path, flags, 0o644)
        except FileExistsError:
            return False
        except FileNotFoundError:
            statedir.makedirs(folder)
            try:
                fd = posix.open(path, flags, 0o644)
            except FileExistsError:
                return False
        try:
            if content:
                posix.write(fd, content.encode())
        finally:
            posix.close(fd)
        return True

    def release(self, min_priority: int | None = None) -> list[str]:
        """Forget claims (all, or those at or above `min_priority`); return the slugs released."""
        folder = self.dir + "/" + statedir.CLAIMS
        if statedir.READ_ONLY:
            return []
        try:
            names = sorted(posix.listdir(folder))
        except OSError:
            return []
        released = []
        for name in names:
            path = folder + "/" + name
            if min_priority is not None:
                text = statedir.read_text(path) or ""
                try:
                    priority = int(text.strip() or "0")
                except ValueError:
                    priority = 0
                if priority < min_priority:
                    continue
            try:
                posix.unlink(path)
                released.append(name)
            except FileNotFoundError:
                pass
        return released

    def counter(self) -> int:
        text = statedir.read_text(self.dir + "/" + statedir.TURN)
        try:
            return int((text or "0").strip() or "0")
        except ValueError:
            return 0

    def advance_turn(self) -> int:
        """Count a new prompt; returns the new turn number."""
        number = self.counter() + 1
        statedir.write_atomic(self.dir + "/" + statedir.TURN, str(number).encode())
        return number

    def turn(self, prompt_id: object) -> str:
        """The turn key: the payload's prompt_id when present, else the prompt counter."""
        if isinstance(prompt_id, str) and prompt_id:
            return prompt_id
        return str(self.counter())
