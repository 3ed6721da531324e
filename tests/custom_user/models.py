"""A user model of a project's own (``AUTH_USER_MODEL``), for tests/capabilities_child.py
only: an e-mail login and Django's ``PermissionsMixin``, no ``auth.User``."""

from __future__ import annotations

from typing import Any, ClassVar

from django.contrib.auth.base_user import AbstractBaseUser, BaseUserManager
from django.contrib.auth.models import PermissionsMixin
from django.db import models


class MemberManager(BaseUserManager["Member"]):
    def create_user(self, email: str, **fields: Any) -> Member:
        member = self.model(email=email, **fields)
        member.set_unusable_password()
        member.save(using=self._db)
        return member


class Member(AbstractBaseUser, PermissionsMixin):
    email = models.EmailField(unique=True)
    is_active = models.BooleanField(default=True)

    USERNAME_FIELD = "email"
    objects: ClassVar[MemberManager] = MemberManager()

    class Meta:
        app_label = "custom_user"
