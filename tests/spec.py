"""SPEC §8 as data, written from the specification text (never from the app's code).

Shared by the tests that compare every face with the specification.
"""

from __future__ import annotations

# SPEC §8, "State reasons": the caller has the capability, the state is wrong.
STATE_REASONS: dict[str, dict[str, str]] = {
    "confirm_order": {
        "confirmed": "already_confirmed",
        "shipped": "already_shipped",
        "delivered": "already_shipped",
        "refunded": "already_shipped",
        "cancelled": "order_cancelled",
    },
    "ship_order": {
        "pending": "not_confirmed",
        "shipped": "already_shipped",
        "delivered": "already_shipped",
        "refunded": "already_shipped",
        "cancelled": "order_cancelled",
    },
    "deliver_order": {
        "pending": "not_shipped",
        "confirmed": "not_shipped",
        "delivered": "already_delivered",
        "refunded": "already_delivered",
        "cancelled": "order_cancelled",
    },
    "cancel_order": {
        "shipped": "already_shipped",
        "delivered": "already_shipped",
        "refunded": "already_shipped",
        "cancelled": "already_cancelled",
    },
    "refund_order": {
        "pending": "not_delivered",
        "confirmed": "not_delivered",
        "shipped": "not_delivered",
        "refunded": "already_refunded",
        "cancelled": "order_cancelled",
    },
}
