"""The ladders' tables: a ladder's own key (its aliases are drawn from it), who entered which
engine, and which arena games are the ladder's (played while workers idle, or in its deadline
tournament). A ladder's options are the course's (course.yaml): only its state lives here."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import DateTime, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base, now

LADDER, DEADLINE = "ladder", "deadline"  # a ladder game's stage


class LadderState(Base):
    """A ladder of the course (by its name): the key its aliases are drawn from, and its deadline
    tournament once the instructor started it (the final versions, frozen then)."""

    __tablename__ = "ladders"
    name: Mapped[str] = mapped_column(String(40), primary_key=True)
    alias_key: Mapped[str] = mapped_column(String(32))  # random: aliases cannot be worked out from names
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
    deadline_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    deadline_versions: Mapped[str | None] = mapped_column(Text, nullable=True)  # JSON: [version id, ...]


class LadderEntry(Base):
    """A participant of a ladder and the engine they entered (the version they chose plays, else
    its latest checked one);
    ``alias`` is drawn when they join and never changes."""

    __tablename__ = "ladder_entries"
    __table_args__ = (UniqueConstraint("ladder", "user_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    ladder: Mapped[str] = mapped_column(ForeignKey("ladders.name"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    engine_id: Mapped[int] = mapped_column(ForeignKey("arena_engines.id"))
    # the checked version its author chose to play (None: the engine's latest checked version)
    version_id: Mapped[int | None] = mapped_column(ForeignKey("engine_versions.id"), nullable=True)
    alias: Mapped[str] = mapped_column(String(80))
    joined_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)


class LadderGame(Base):
    """An arena game of a ladder: ``stage`` ladder (planned while workers idle) or deadline."""

    __tablename__ = "ladder_games"
    game_id: Mapped[int] = mapped_column(ForeignKey("arena_games.id"), primary_key=True)
    ladder: Mapped[str] = mapped_column(ForeignKey("ladders.name"), index=True)
    stage: Mapped[str] = mapped_column(String(16), default=LADDER)
