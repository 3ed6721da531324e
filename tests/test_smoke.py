from __future__ import annotations


def test_alice_sees_her_nine_orders(api):
    response = api("alice").get("/api/orders/")
    assert response.status_code == 200
    assert response.json()["count"] == 9
