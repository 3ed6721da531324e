from __future__ import annotations


def test_alice_sees_her_nine_orders(api):
    response = api("alice").get("/api/orders/")
    assert response.status_code == 200
    assert response.json()["count"] == 9


def test_the_front_door_leads_to_the_api_entry_point(client) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/api/"
